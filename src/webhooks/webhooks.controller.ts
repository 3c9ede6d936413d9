import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext } from '../auth/auth-context';
import { Caller, RequireScope } from '../auth/auth.decorators';
import { ListQuery, type ListResponse } from '../common/pagination';
import { ApiErrorResponses } from '../common/openapi/api-error-responses';
import { ApiPage, ApiSuccess, pageOf } from '../common/openapi/api-success';
import {
  CreateWebhookEndpointDto,
  DeletedWebhookEndpointResponse,
  EventResponse,
  WebhookEndpointResponse,
  WebhookEndpointWithSecretResponse,
  ListDeliveriesQuery,
  ListEventsQuery,
  RedeliverQuery,
  WebhookDeliveryResponse,
} from './dto/webhook-endpoint.dto';
import { EventStream } from './event-stream';
import { WebhooksService, type DeliveryView, type EventView, type WebhookEndpointView } from './webhooks.service';

@ApiTags('webhooks')
@ApiSecurity('api_key')
@RequireScope('webhooks')
@Controller('v1/webhook-endpoints')
export class WebhookEndpointsController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @ApiOperation({
    summary: 'Register a webhook endpoint (its whsec_ secret is shown once, in this response)',
    description:
      'One endpoint per URL and event filter: a second with the same URL and the same events (in any order) is 409 ' +
      '`webhook_endpoint_exists` (`param` url, `details.endpoint_id` the one that exists). An account holds at most ' +
      "its plan's number of endpoints (free 5, starter 10, pro 20, enterprise 50): one more is 429 `quota_exceeded` " +
      'with `details.webhook_endpoints_limit` and `webhook_endpoints_used`. Nothing connects to the URL here.',
  })
  @ApiSuccess(201, WebhookEndpointWithSecretResponse, 'The endpoint, with its signing secret (shown only here)')
  @ApiErrorResponses('auth', 'rate', 'invalid', 'webhook_url')
  create(@Caller() caller: AuthContext, @Body() body: CreateWebhookEndpointDto): Promise<WebhookEndpointView> {
    // events: null is the same as leaving it out (every event).
    return this.webhooks.createEndpoint(caller.accountId, body.url, body.events ?? undefined);
  }

  @Get()
  @ApiOperation({ summary: "List the account's webhook endpoints (never their secrets)" })
  @ApiPage(WebhookEndpointResponse)
  @ApiErrorResponses('auth', 'rate', 'invalid')
  list(@Caller() caller: AuthContext, @Query() query: ListQuery): Promise<ListResponse<WebhookEndpointView>> {
    return this.webhooks.listEndpoints(caller.accountId, query.limit, query.starting_after);
  }

  @Get(':id')
  @ApiOperation({ summary: 'A webhook endpoint' })
  @ApiSuccess(200, WebhookEndpointResponse, 'The endpoint')
  @ApiErrorResponses('auth', 'rate', 'missing')
  get(@Caller() caller: AuthContext, @Param('id') id: string): Promise<WebhookEndpointView> {
    return this.webhooks.getEndpoint(caller.accountId, id);
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Delete a webhook endpoint: nothing more is sent to it, its delivery log goes too' })
  @ApiSuccess(200, DeletedWebhookEndpointResponse, 'The endpoint as it was, deleted')
  @ApiErrorResponses('auth', 'rate', 'missing')
  delete(@Caller() caller: AuthContext, @Param('id') id: string): Promise<WebhookEndpointView> {
    return this.webhooks.deleteEndpoint(caller.accountId, id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ summary: 'Replace the signing secret (shown once); for 24 h deliveries are signed with both' })
  @ApiSuccess(200, WebhookEndpointWithSecretResponse, 'The endpoint, with its new secret (shown only here)')
  @ApiErrorResponses('auth', 'rate', 'missing')
  rotateSecret(@Caller() caller: AuthContext, @Param('id') id: string): Promise<WebhookEndpointView> {
    return this.webhooks.rotateSecret(caller.accountId, id);
  }

  @Post(':id/test')
  @HttpCode(202)
  @ApiSuccess(202, WebhookDeliveryResponse, 'The test delivery, due now')
  @ApiOperation({
    summary: 'Send a test event (webhook.test, no job) to this endpoint alone; it appears in the delivery log',
  })
  @ApiErrorResponses('auth', 'rate', 'invalid', 'missing')
  sendTestEvent(@Caller() caller: AuthContext, @Param('id') id: string): Promise<DeliveryView> {
    return this.webhooks.sendTestEvent(caller.accountId, id);
  }

  @Get(':id/deliveries')
  @ApiOperation({
    summary: 'Deliveries to this endpoint, newest first, each with its attempts (time, status, duration, error)',
  })
  @ApiPage(WebhookDeliveryResponse)
  @ApiErrorResponses('auth', 'rate', 'invalid', 'missing')
  deliveries(
    @Caller() caller: AuthContext,
    @Param('id') id: string,
    @Query() query: ListDeliveriesQuery,
  ): Promise<ListResponse<DeliveryView>> {
    return this.webhooks.listDeliveries(caller.accountId, id, query);
  }
}

@ApiTags('events')
@ApiSecurity('api_key')
@RequireScope('webhooks')
@Controller('v1/events')
export class EventsController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly events: EventStream,
  ) {}

  @Get()
  @ApiOperation({ summary: "The account's recent events, newest first (filter by type and job)" })
  @ApiPage(EventResponse)
  @ApiErrorResponses('auth', 'rate', 'invalid')
  list(@Caller() caller: AuthContext, @Query() query: ListEventsQuery): Promise<ListResponse<EventView>> {
    return this.webhooks.listEvents(caller.accountId, query);
  }

  @Get('stream')
  @ApiProduces('text/event-stream')
  @ApiOperation({
    summary: "The account's events as they happen (server-sent events), for `mediajobs listen`",
    description:
      'Each event is `id: evt_…`, `event: <type>`, `data: <the webhook body>`. Starts with events created from the moment of ' +
      'connection. A reconnect with `Last-Event-ID: evt_…` first sends every event after that one, then goes live: events are ' +
      'kept for JOB_RETENTION_DAYS (30 days unless the operator set otherwise), and a Last-Event-ID older than that is ' +
      '410 `resume_point_expired` (read GET /v1/events instead) rather than a stream with a gap. A `: keep-alive` comment ' +
      'comes every 15 s. The stream lives as long as its credential: within a second of the key being revoked or expiring, ' +
      'the session ending or the account being suspended it ends (a `: stream ended: <code>` comment, then the close; the ' +
      'reconnect gets that error). An account holds at most its plan’s number of open streams (free 2, starter 5, pro 20, ' +
      'enterprise 100): one more is 429 `stream_limit_exceeded`. Delivery is at least once: deduplicate on the event id.',
  })
  @ApiResponse({
    status: 200,
    description: 'A text/event-stream that stays open.',
    content: {
      'text/event-stream': {
        schema: { type: 'string', description: 'Server-sent events; each `data:` line is a WebhookEvent as JSON.' },
        example:
          'id: evt_0Qx3cA1b2C3d4E5f6G7h8i9\nevent: job.succeeded\ndata: {"id":"evt_0Qx3cA1b2C3d4E5f6G7h8i9","event":"job.succeeded","created_at":"2026-01-15T09:30:00.000Z","data":{"job":{"job_id":"job_0Qx3cA1b2C3d4E5f6G7h8i9"},"error":null}}\n\n',
      },
    },
  })
  @ApiErrorResponses('auth', 'rate', 'event_stream')
  async stream(
    @Caller() caller: AuthContext,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.events.serve(caller, request, reply);
  }

  @Get(':id')
  @ApiOperation({ summary: 'An event, exactly as its webhook body' })
  @ApiSuccess(200, EventResponse, 'The event: its webhook body, with object')
  @ApiErrorResponses('auth', 'rate', 'missing')
  get(@Caller() caller: AuthContext, @Param('id') id: string): Promise<EventView> {
    return this.webhooks.getEvent(caller.accountId, id);
  }

  @Post(':id/redeliver')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send the event again to every enabled endpoint subscribed to it, or to ?endpoint_id=' })
  @ApiSuccess(202, pageOf(WebhookDeliveryResponse), 'The new deliveries, due now')
  @ApiErrorResponses('auth', 'rate', 'invalid', 'missing')
  redeliver(
    @Caller() caller: AuthContext,
    @Param('id') id: string,
    @Query() query: RedeliverQuery,
  ): Promise<ListResponse<DeliveryView>> {
    return this.webhooks.redeliver(caller.accountId, id, query.endpoint_id);
  }
}
