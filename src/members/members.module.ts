import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { Mailer } from '../common/mail/mailer';
import { MembersController } from './members.controller';
import { MembersRepository } from './members.repository';
import { MembersService } from './members.service';
import { PasswordLinksController } from './password-links.controller';
import { SessionsController } from './sessions.controller';
import { SignInLimiter } from './sign-in-limiter';
import { SignInService } from './sign-in.service';

/** People who sign in to the dashboard: members and roles, invitations, passwords, sign-in and out. */
@Module({
  imports: [AuthModule],
  controllers: [SessionsController, PasswordLinksController, MembersController],
  providers: [MembersRepository, MembersService, SignInService, SignInLimiter, Mailer],
  exports: [MembersService],
})
export class MembersModule {}
