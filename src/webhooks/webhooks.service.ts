import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { newId } from '../common/ids';
import { checkUrl } from '../common/net/safe-url';
import { toList, type ListResponse } from '../common/pagination';
import {
  JOB_EVENTS,
  OutboxWriter,
  TEST_EVENT,
  type EventPayload,
  type EventType,
  type JobEvent,
} from './outbox.writer';
import { generateSecret } from './signature';
import {
  WebhooksRepository,
  type AttemptRow,
  type DeliveryRow,
  type DeliveryState,
  type EndpointRow,
  type EventRow,
} from './webhooks.repository';

/** How long deliveries are also signed with the secret a rotation replaced (docs/api-decisions.md §6). */
export const SECRET_OVERLAP_SECONDS = 24 * 3600;

export interface WebhookEndpointView {
  object: 'webhook_endpoint';
  id: string;
  url: string;
  events: JobEvent[];
  status: 'enabled' | 'disabled';
  disabled_at: string | null;
  disabled_reason: string | null;
  /** Until when deliveries are also signed with the secret the last rotation replaced. */
  previous_secret_expires_at: string | null;
  created_at: string;
  /** Present only in the responses that create or rotate it. */
  secret?: string;
  /** Present only in the response to a delete. */
  deleted?: true;
}

export type EventView = { object: 'event' } & EventPayload;

export interface DeliveryView {
  object: 'webhook_delivery';
  id: string;
  endpoint_id: string;
  event_id: string;
  event: EventType;
  /** True for a delivery asked for with POST /v1/events/{id}/redeliver. */
  redelivery: boolean;
  state: DeliveryState;
  attempt_count: number;
  next_attempt_at: string | null;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
  attempts: {
    attempt: number;
    attempted_at: string;
    status_code: number | null;
    duration_ms: number;
    error: string | null;
  }[];
}

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

function toEndpointView(row: EndpointRow, extra: { secret?: string; deleted?: true } = {}): WebhookEndpointView {
  const overlap =
    row.previous_secret_expires_at && row.previous_secret_expires_at > new Date()
      ? row.previous_secret_expires_at
      : null;
  return {
    object: 'webhook_endpoint',
    id: row.id,
    url: row.url,
    events: row.events,
    status: row.disabled_at ? 'disabled' : 'enabled',
    disabled_at: iso(row.disabled_at),
    disabled_reason: row.disabled_reason,
    previous_secret_expires_at: iso(overlap),
    created_at: row.created_at.toISOString(),
    ...extra,
  };
}

function toEventView(row: EventRow): EventView {
  return { object: 'event', ...row.payload };
}

function toAttemptView(attempt: AttemptRow): DeliveryView['attempts'][number] {
  return { ...attempt, attempted_at: new Date(attempt.attempted_at).toISOString() };
}

function toDeliveryView(row: DeliveryRow): DeliveryView {
  return {
    object: 'webhook_delivery',
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event: row.event,
    redelivery: row.origin === 'redelivery',
    state: row.state,
    attempt_count: row.attempts,
    next_attempt_at: iso(row.next_attempt_at),
    last_error: row.last_error,
    created_at: row.created_at.toISOString(),
    finished_at: iso(row.finished_at),
    attempts: row.attempt_log.map(toAttemptView),
  };
}

/** The API side of webhooks: endpoint registry, event log, delivery log and redelivery. Sending is the worker's. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly repository: WebhooksRepository,
    private readonly outbox: OutboxWriter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async createEndpoint(
    accountId: string,
    url: string,
    events: JobEvent[] = [...JOB_EVENTS],
  ): Promise<WebhookEndpointView> {
    // Only resolves the name (an IP literal not even that): nothing is connected to at registration.
    const check = await checkUrl(url, {
      allow: this.config.allowPrivateUrls,
      explainAllowList: this.config.nodeEnv !== 'production',
    });
    if (!check.ok) throw new ApiError('invalid_url', { param: 'url', message: check.reason });
    const secret = generateSecret();
    const outcome = await this.repository.insertEndpoint({
      id: newId('we'),
      accountId,
      url: check.url.href,
      // In the catalogue's order, without repeats: the same filter is the same array, whatever order it came in.
      events: JOB_EVENTS.filter((event) => events.includes(event)),
      secret,
    });
    // Each endpoint is sent every event it subscribes to (and each redelivery): copies and an unbounded
    // number would let one event fan out into any number of requests (docs/api-decisions.md §6).
    if ('duplicateOf' in outcome) {
      throw new ApiError('webhook_endpoint_exists', {
        param: 'url',
        message: `Endpoint ${outcome.duplicateOf} already has this URL and these events. Use it, or delete it first.`,
        details: { endpoint_id: outcome.duplicateOf },
      });
    }
    if ('limit' in outcome) {
      throw new ApiError('quota_exceeded', {
        message: `Your plan allows ${outcome.limit} webhook endpoints and the account has ${outcome.used}. Delete one you no longer use, or upgrade your plan.`,
        details: { webhook_endpoints_limit: outcome.limit, webhook_endpoints_used: outcome.used },
      });
    }
    return toEndpointView(outcome.created, { secret });
  }

  async listEndpoints(
    accountId: string,
    limit = 20,
    startingAfter?: string,
  ): Promise<ListResponse<WebhookEndpointView>> {
    const found = await this.repository.listEndpoints(accountId, limit + 1, startingAfter);
    return toList(
      found.map((endpoint) => toEndpointView(endpoint)),
      limit,
      (view) => view.id,
    );
  }

  async getEndpoint(accountId: string, id: string): Promise<WebhookEndpointView> {
    return toEndpointView(await this.requireEndpoint(accountId, id));
  }

  async deleteEndpoint(accountId: string, id: string): Promise<WebhookEndpointView> {
    const deleted = await this.repository.deleteEndpoint(accountId, id);
    if (!deleted) throw endpointMissing('id');
    return toEndpointView(deleted, { deleted: true });
  }

  /** A new secret, shown once; the old one keeps signing alongside it for SECRET_OVERLAP_SECONDS. */
  async rotateSecret(accountId: string, id: string): Promise<WebhookEndpointView> {
    const secret = generateSecret();
    const rotated = await this.repository.rotateSecret(accountId, id, secret, SECRET_OVERLAP_SECONDS);
    if (!rotated) throw endpointMissing('id');
    return toEndpointView(rotated, { secret });
  }

  async listDeliveries(
    accountId: string,
    endpointId: string,
    query: { limit?: number; starting_after?: string; event_id?: string },
  ): Promise<ListResponse<DeliveryView>> {
    await this.requireEndpoint(accountId, endpointId);
    const limit = query.limit ?? 20;
    const found = await this.repository.listDeliveries(endpointId, {
      limit: limit + 1,
      startingAfter: query.starting_after,
      eventId: query.event_id,
    });
    return toList(found.map(toDeliveryView), limit, (view) => view.id);
  }

  async listEvents(
    accountId: string,
    query: { limit?: number; starting_after?: string; type?: EventType; job_id?: string },
  ): Promise<ListResponse<EventView>> {
    const limit = query.limit ?? 20;
    const found = await this.repository.listEvents(accountId, {
      limit: limit + 1,
      startingAfter: query.starting_after,
      type: query.type,
      jobId: query.job_id,
      retentionDays: this.config.jobRetentionDays,
    });
    return toList(found.map(toEventView), limit, (view) => view.id);
  }

  async getEvent(accountId: string, id: string): Promise<EventView> {
    return toEventView(await this.requireEvent(accountId, id));
  }

  /**
   * Sends the event again as new deliveries (the receiver sees the same webhook-id and deduplicates):
   * to one endpoint, or to every enabled endpoint subscribed to the event's kind.
   */
  async redeliver(accountId: string, eventId: string, endpointId?: string): Promise<ListResponse<DeliveryView>> {
    const event = await this.requireEvent(accountId, eventId);
    let endpointIds: string[];
    if (endpointId) {
      const endpoint = await this.repository.findEndpoint(accountId, endpointId);
      if (!endpoint) throw endpointMissing('endpoint_id');
      if (endpoint.disabled_at) throw endpointDisabled('endpoint_id');
      endpointIds = [endpoint.id];
    } else {
      endpointIds = await this.repository.subscribedEndpointIds(accountId, event.event);
    }
    const created = await this.repository.insertRedeliveries(event.id, endpointIds);
    return toList(created.map(toDeliveryView), created.length, (view) => view.id);
  }

  /**
   * "Send a test event": a `webhook.test` event (no job) delivered to this endpoint alone, signed
   * and retried like any other, shown in its delivery log, and on the account's open event streams
   * (a listener checks its receiver with it too).
   */
  async sendTestEvent(accountId: string, endpointId: string): Promise<DeliveryView> {
    const endpoint = await this.requireEndpoint(accountId, endpointId);
    if (endpoint.disabled_at) throw endpointDisabled('id');
    const payload: EventPayload = {
      id: newId('evt'),
      event: TEST_EVENT,
      created_at: new Date().toISOString(),
      data: { job: null, error: null },
    };
    const delivery = await this.repository.insertTestEvent(accountId, endpoint.id, payload);
    // Written as dispatched (its one delivery with it), so the relay never publishes it: this is its only announcement.
    this.outbox.announce(accountId, payload);
    return toDeliveryView(delivery);
  }

  private async requireEndpoint(accountId: string, id: string): Promise<EndpointRow> {
    const found = await this.repository.findEndpoint(accountId, id);
    if (!found) throw endpointMissing('id');
    return found;
  }

  private async requireEvent(accountId: string, id: string): Promise<EventRow> {
    const found = await this.repository.findEvent(accountId, id, this.config.jobRetentionDays);
    // Another account's event answers exactly like a missing one.
    if (!found)
      throw new ApiError('resource_missing', {
        param: 'id',
        message: 'No event with this id exists for your account.',
      });
    return found;
  }
}

function endpointDisabled(param: string): ApiError {
  return new ApiError('invalid_parameter', {
    param,
    message: 'This webhook endpoint is disabled; register the URL again to receive events.',
  });
}

function endpointMissing(param: string): ApiError {
  return new ApiError('resource_missing', {
    param,
    message: 'No webhook endpoint with this id exists for your account.',
  });
}
