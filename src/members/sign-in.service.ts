import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors';
import { MembersRepository, type SignInRow } from './members.repository';
import { normaliseEmail } from './members.service';
import { dummyHash, verifyPassword } from './password';
import { SignInLimiter } from './sign-in-limiter';

/**
 * Email and password to a member. One answer (invalid_credentials) for an unknown email, a member
 * who has not chosen a password yet and a wrong password, in about the same time: an unknown email
 * is checked against a dummy hash. Failed attempts are limited per IP and per email.
 */
@Injectable()
export class SignInService {
  constructor(
    private readonly members: MembersRepository,
    private readonly limiter: SignInLimiter,
  ) {}

  async verify(ip: string, email: string, password: string): Promise<SignInRow> {
    const address = normaliseEmail(email);
    const attempt = await this.limiter.reserve('signin', ip, address);
    const member = await this.members.findForSignIn(address);
    const matches = await verifyPassword(password, member?.password_hash ?? (await dummyHash()));
    if (!member || !member.password_hash || !matches) {
      throw new ApiError('invalid_credentials', { param: 'password' });
    }
    await this.limiter.release(attempt);
    await this.members.markSignedIn(member.id);
    return member;
  }
}
