import { Body, Controller, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../auth/auth.decorators';
import { checkBrowserOrigin } from '../auth/same-origin';
import { SessionsService } from '../auth/sessions.service';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiErrorResponses } from '../common/openapi/api-error-responses';
import { PasswordLinkDto, PasswordResetRequestDto, RedeemPasswordLinkDto } from './dto/members.dto';
import { PasswordLinkResponse, PasswordResetRequestResponse, SessionResponse } from './dto/responses';
import { MembersRepository } from './members.repository';
import { MembersService, normaliseEmail, type PasswordLinkView } from './members.service';
import { toSessionView, type SessionView } from './session-view';
import { SignInLimiter } from './sign-in-limiter';

/** One-time links that set a password: "forgot password", and following an invitation or reset link. */
@ApiTags('sessions')
@Public()
@Controller('v1/password-links')
export class PasswordLinksController {
  private readonly publicOrigin: string;

  constructor(
    private readonly members: MembersService,
    private readonly repository: MembersRepository,
    private readonly sessions: SessionsService,
    private readonly limiter: SignInLimiter,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.publicOrigin = new URL(config.publicBaseUrl).origin;
  }

  @Post()
  @HttpCode(202)
  @ApiOperation({
    summary:
      'Forgot password: mails a one-time reset link (24 h) if the email belongs to a member; same answer either way',
  })
  @ApiResponse({ status: 202, type: PasswordResetRequestResponse })
  @ApiErrorResponses('invalid')
  async create(
    @Body() body: PasswordResetRequestDto,
    @Req() request: FastifyRequest,
  ): Promise<{ object: 'password_reset_request'; email: string; message: string }> {
    const email = normaliseEmail(body.email);
    // Each request may send a mail: limited like failed sign-ins, per IP and per email.
    await this.limiter.reserve('reset', request.ip, email);
    this.members.requestReset(email);
    return {
      object: 'password_reset_request',
      email,
      message: 'If this email belongs to a member, a reset link is on its way.',
    };
  }

  @Post('inspect')
  @HttpCode(200)
  @ApiOperation({ summary: 'What a link is for (invitation or reset, whose email, which account) while it works' })
  @ApiResponse({ status: 200, type: PasswordLinkResponse })
  @ApiErrorResponses('invalid')
  inspect(@Body() body: PasswordLinkDto): Promise<PasswordLinkView> {
    return this.members.inspectLink(body.token);
  }

  @Post('redeem')
  @ApiOperation({
    summary: 'Choose a password with a one-time link; ends the member’s other sessions and signs in (sets the cookie)',
  })
  @ApiResponse({ status: 201, type: SessionResponse })
  @ApiErrorResponses('invalid', 'sign_in')
  async redeem(
    @Body() body: RedeemPasswordLinkDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SessionView> {
    checkBrowserOrigin(request, this.publicOrigin);
    const { member, session } = await this.repository.transaction(async (manager) => {
      const memberId = await this.members.redeemLink(manager, body.token, body.password);
      const started = await this.sessions.start(
        memberId,
        this.sessions.presentedToken(request.headers.cookie),
        manager,
      );
      return { member: (await this.repository.findWithAccount(memberId, manager))!, session: started };
    });
    void reply.header('Set-Cookie', session.cookie).header('Cache-Control', 'no-store');
    return toSessionView(member, session, this.sessions.idleTimeoutSeconds);
  }
}
