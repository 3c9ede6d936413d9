import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ArrayMinSize, IsArray, IsDefined, IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import type { ErrorObject } from '../../common/errors';
import { ListQuery } from '../../common/pagination';
import { ApiErrorObjectOrNull } from '../../common/openapi/api-success';
import { OutputCheckResponse } from '../../common/openapi/measured-output.response';
import { JOB_EVENTS, TEST_EVENT, type EventType, type JobEvent } from '../outbox.writer';

export class CreateWebhookEndpointDto {
  @ApiProperty({ example: 'https://example.com/webhooks/mediajobs', maxLength: 2048 })
  @IsDefined()
  @IsString()
  @MaxLength(2048)
  url: string;

  @ApiPropertyOptional({ enum: JOB_EVENTS, isArray: true, description: 'Events to receive (default: all of them).' })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @IsIn(JOB_EVENTS, { each: true, message: `each event must be one of ${JOB_EVENTS.join(', ')}` })
  events?: JobEvent[];
}

export class ListDeliveriesQuery extends ListQuery {
  @ApiPropertyOptional({ description: 'Only the deliveries of this event (evt_…).' })
  @IsOptional()
  @Matches(/^evt_[0-9A-Za-z]{1,64}$/, { message: 'event_id must be an event id (evt_…)' })
  event_id?: string;
}

export class ListEventsQuery extends ListQuery {
  @ApiPropertyOptional({ enum: [...JOB_EVENTS, TEST_EVENT], description: 'Only events of this kind.' })
  @IsOptional()
  @IsIn([...JOB_EVENTS, TEST_EVENT], { message: `type must be one of ${[...JOB_EVENTS, TEST_EVENT].join(', ')}` })
  type?: EventType;

  @ApiPropertyOptional({ description: 'Only the events of this job (job_…).' })
  @IsOptional()
  @Matches(/^job_[0-9A-Za-z]{1,64}$/, { message: 'job_id must be a job id (job_…)' })
  job_id?: string;
}

export class RedeliverQuery {
  @ApiPropertyOptional({
    description: 'Send only to this endpoint (we_…); default: every enabled endpoint subscribed to the event.',
  })
  @IsOptional()
  @Matches(/^we_[0-9A-Za-z]{1,64}$/, { message: 'endpoint_id must be a webhook endpoint id (we_…)' })
  endpoint_id?: string;
}

class DeliveryAttemptResponse {
  @ApiProperty({ example: 1 }) attempt: number;
  @ApiProperty({ format: 'date-time' }) attempted_at: string;
  @ApiProperty({ type: Number, nullable: true, example: 500, description: 'null: no answer (timeout, refused).' })
  status_code: number | null;
  @ApiProperty({ example: 38 }) duration_ms: number;
  @ApiProperty({ type: String, nullable: true, example: 'The endpoint answered HTTP 500.' }) error: string | null;
}

export class WebhookDeliveryResponse {
  @ApiProperty({ enum: ['webhook_delivery'] }) object: 'webhook_delivery';
  @ApiProperty({ example: 'dlv_0Qx3cA1b2C3d4E5f6G7h8i9' }) id: string;
  @ApiProperty({ example: 'we_0Qx3cA1b2C3d4E5f6G7h8i9' }) endpoint_id: string;
  @ApiProperty({ example: 'evt_0Qx3cA1b2C3d4E5f6G7h8i9' }) event_id: string;
  @ApiProperty({ enum: [...JOB_EVENTS, TEST_EVENT], example: TEST_EVENT }) event: string;
  @ApiProperty({ description: 'True for a delivery asked for with POST /v1/events/{id}/redeliver.' })
  redelivery: boolean;
  @ApiProperty({ enum: ['pending', 'delivered', 'failed'] }) state: string;
  @ApiProperty({ example: 0 }) attempt_count: number;
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) next_attempt_at: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) last_error: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) finished_at: string | null;
  @ApiProperty({ type: [DeliveryAttemptResponse] }) attempts: DeliveryAttemptResponse[];
}

const EVENT_TYPES = [...JOB_EVENTS, TEST_EVENT];

export class WebhookEndpointResponse {
  @ApiProperty({ enum: ['webhook_endpoint'] }) object: 'webhook_endpoint';
  @ApiProperty({ example: 'we_0Qx3cA1b2C3d4E5f6G7h8i9' }) id: string;
  @ApiProperty({ format: 'uri', example: 'https://example.com/webhooks/mediajobs' }) url: string;
  @ApiProperty({ enum: JOB_EVENTS, isArray: true, example: ['job.succeeded', 'job.failed'] }) events: JobEvent[];
  @ApiProperty({ enum: ['enabled', 'disabled'], description: 'disabled after failing deliveries for days.' })
  status: 'enabled' | 'disabled';
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null }) disabled_at: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) disabled_reason: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: null,
    description: 'Until when deliveries are also signed with the secret the last rotation replaced.',
  })
  previous_secret_expires_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

/** The answer to create and rotate-secret: the only time the signing secret is shown. */
export class WebhookEndpointWithSecretResponse extends WebhookEndpointResponse {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description: 'The signing secret (Standard Webhooks), shown only in this response: store it now.',
  })
  secret: string;
}

export class DeletedWebhookEndpointResponse extends WebhookEndpointResponse {
  @ApiProperty({ enum: [true] }) deleted: true;
}

class WebhookEventItem {
  @ApiProperty({ type: 'integer', example: 0 }) index: number;
  @ApiProperty({ enum: ['succeeded', 'failed', 'cancelled'], example: 'succeeded' }) status: string;
  @ApiProperty({ type: 'integer', example: 20 }) charged_credits: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description:
      "The item's output as measured from the file: the job view's items[i].output (asset_id, size_bytes, " +
      'container, video or audio) without its link; null when the item failed.',
  })
  output: Record<string, unknown> | null;
  @ApiProperty({ type: [OutputCheckResponse], description: "The output's checks (docs/api-decisions.md §12)." })
  checks: OutputCheckResponse[];
}

class WebhookEventJob {
  @ApiProperty({
    example: 'job_0Qx3cA1b2C3d4E5f6G7h8i9',
    description: 'Read the job for its links to the outputs.',
  })
  job_id: string;
}

class WebhookEventData {
  @ApiProperty({
    type: WebhookEventJob,
    nullable: true,
    description: '`job_id` only (the specification §6); null in a webhook.test event.',
  })
  job: WebhookEventJob | null;
  @ApiPropertyOptional({
    type: [WebhookEventItem],
    description:
      "Each item as it ended: status, charge (their sum is the job's charged_credits), measured output and checks. " +
      'Absent in a webhook.test event.',
  })
  items?: WebhookEventItem[];
  @ApiErrorObjectOrNull("The job's `error`, the very same object (job.failed, job.partially_succeeded); else null.")
  error: ErrorObject | null;
}

/** The body of every webhook request (and of GET /v1/events/{id} without `object`). */
@ApiSchema({ name: 'WebhookEvent' })
export class WebhookEventBody {
  @ApiProperty({
    example: 'evt_0Qx3cA1b2C3d4E5f6G7h8i9',
    description: 'Also the webhook-id header: deduplicate on it.',
  })
  id: string;
  @ApiProperty({ enum: EVENT_TYPES, example: 'job.succeeded' }) event: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: WebhookEventData }) data: WebhookEventData;
}

export class EventResponse {
  @ApiProperty({ enum: ['event'] }) object: 'event';
  @ApiProperty({ example: 'evt_0Qx3cA1b2C3d4E5f6G7h8i9' }) id: string;
  @ApiProperty({ enum: EVENT_TYPES, example: 'job.succeeded' }) event: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: WebhookEventData }) data: WebhookEventData;
}
