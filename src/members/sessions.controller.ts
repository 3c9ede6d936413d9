import { Body, Controller, Delete, Get, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext } from '../auth/auth-context';
import { Caller, OwnSession, Public } from '../auth/auth.decorators';
import { checkBrowserOrigin } from '../auth/same-origin';
import { SessionsService } from '../auth/sessions.service';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiErrorResponses } from '../common/openapi/api-error-responses';
import { SignInDto } from './dto/members.dto';
import { SessionResponse, SignOutResponse } from './dto/responses';
import { MembersRepository } from './members.repository';
import { toSessionView, type SessionView } from './session-view';
import { SignInService } from './sign-in.service';

/** Signing in to the dashboard and out of it. The session is a cookie; see SessionAuthenticator. */
@ApiTags('sessions')
@Controller('v1/sessions')
export class SessionsController {
  private readonly publicOrigin: string;

  constructor(
    private readonly signIn: SignInService,
    private readonly sessions: SessionsService,
    private readonly members: MembersRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.publicOrigin = new URL(config.publicBaseUrl).origin;
  }

  @Post()
  @Public()
  @ApiOperation({
    summary: 'Sign in with email and password: sets the session cookie (a new session id) and returns the CSRF token',
  })
  @ApiResponse({ status: 201, type: SessionResponse, description: 'Signed in; `Set-Cookie: mj_session=…`.' })
  @ApiErrorResponses('invalid', 'sign_in')
  async create(
    @Body() body: SignInDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SessionView> {
    checkBrowserOrigin(request, this.publicOrigin);
    const member = await this.signIn.verify(request.ip, body.email, body.password);
    const session = await this.sessions.start(member.id, this.sessions.presentedToken(request.headers.cookie));
    void reply.header('Set-Cookie', session.cookie).header('Cache-Control', 'no-store');
    return toSessionView(member, session, this.sessions.idleTimeoutSeconds);
  }

  @Get('current')
  @OwnSession()
  @ApiSecurity('session')
  @ApiOperation({ summary: 'The signed-in member, their account and the CSRF token of this session' })
  @ApiResponse({ status: 200, type: SessionResponse })
  @ApiErrorResponses('auth', 'session', 'rate')
  async current(@Caller() caller: AuthContext, @Res({ passthrough: true }) reply: FastifyReply): Promise<SessionView> {
    const member = (await this.members.findWithAccount(caller.member!.id))!;
    void reply.header('Cache-Control', 'no-store');
    return toSessionView(
      member,
      await this.sessions.describe(caller.member!.sessionId),
      this.sessions.idleTimeoutSeconds,
    );
  }

  @Delete('current')
  @OwnSession()
  @ApiSecurity('session')
  @ApiOperation({ summary: 'Sign out: ends this session and clears its cookie' })
  @ApiResponse({ status: 200, type: SignOutResponse })
  @ApiErrorResponses('auth', 'session', 'rate')
  async delete(
    @Caller() caller: AuthContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<{ object: 'session_revocation'; revoked_sessions: number }> {
    await this.sessions.end(caller.member!.sessionId);
    void reply.header('Set-Cookie', this.sessions.clearedCookie());
    return { object: 'session_revocation', revoked_sessions: 1 };
  }

  @Delete()
  @OwnSession()
  @ApiSecurity('session')
  @ApiOperation({ summary: 'Sign out everywhere: ends every session of the signed-in member, this one included' })
  @ApiResponse({ status: 200, type: SignOutResponse })
  @ApiErrorResponses('auth', 'session', 'rate')
  async deleteAll(
    @Caller() caller: AuthContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<{ object: 'session_revocation'; revoked_sessions: number }> {
    const revoked = await this.sessions.endAllOfMember(caller.member!.id);
    void reply.header('Set-Cookie', this.sessions.clearedCookie());
    return { object: 'session_revocation', revoked_sessions: revoked };
  }
}
