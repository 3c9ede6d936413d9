// A submit's (and an estimate's) body as the use cases take it, and the body's own rules that
// class-validator cannot express (docs/api-decisions.md §2 step 4): metadata, one source per input.
import { ApiError } from '../../common/errors';
import type { IdempotencyClaim } from '../../common/idempotency/idempotent-response';
import type { JobInputDto } from '../dto/submit-job.dto';
import type { ItemSource } from '../job.types';
import type { NewJobItem } from '../jobs.repository';
import type { RequestedOutput } from '../output-options';
import type { DeclaredSource } from '../sources.service';

export type SubmitRequest = RequestedOutput & {
  inputs: JobInputDto[];
  metadata: Record<string, unknown>;
  region?: string;
  requestId: string;
  /** The request's claimed Idempotency-Key: its 202 is stored in the job's own transaction. */
  idempotency?: IdempotencyClaim;
  /** Aborts when the client goes away: the source checks still running for it stop (made when first asked for). */
  signal?: () => AbortSignal;
};

/** A checked input with its price: a source, or (estimate only) a described file. */
export type PricedItem = Omit<NewJobItem, 'source'> & { source: ItemSource | DeclaredSource };

export function validateMetadata(metadata: Record<string, unknown>): Record<string, string> {
  const entries = Object.entries(metadata);
  if (entries.length > 50)
    throw new ApiError('invalid_parameter', { param: 'metadata', message: 'metadata takes at most 50 keys.' });
  for (const [key, value] of entries) {
    if (key.length > 40 || typeof value !== 'string' || value.length > 500) {
      throw new ApiError('invalid_parameter', {
        param: `metadata.${key}`,
        message: 'metadata values must be strings of at most 500 characters, keys at most 40 characters.',
      });
    }
  }
  return metadata as Record<string, string>;
}

/** The request field an item came from, as its errors name it. */
export function inputParam(source: ItemSource | DeclaredSource, index: number): string {
  const field = source.type === 'declared' ? 'media' : source.type === 'upload' ? 'upload_id' : 'source_url';
  return `inputs[${index}].${field}`;
}

/** A submit's items are sources: validateInput refused `media` for a submit. */
export function storedItem(item: PricedItem): NewJobItem {
  const { source } = item;
  if (source.type === 'declared') throw new Error('a described input reached a submit');
  return { ...item, source };
}

export function validateInput(input: JobInputDto, index: number, purpose: 'submit' | 'estimate'): JobInputDto {
  if (input.media !== undefined) {
    if (purpose === 'submit') {
      throw new ApiError('invalid_parameter', {
        param: `inputs[${index}].media`,
        message: `inputs[${index}].media describes a file for an estimate only: upload it (POST /v1/uploads) and submit its upload_id.`,
      });
    }
    if (input.source_url !== undefined || input.upload_id !== undefined) {
      throw new ApiError('invalid_parameter', {
        param: `inputs[${index}].media`,
        message: `inputs[${index}] takes one of source_url, upload_id or media.`,
      });
    }
    return input;
  }
  if (input.source_url === undefined && input.upload_id === undefined) {
    throw new ApiError('missing_parameter', {
      param: `inputs[${index}].source_url`,
      message: `inputs[${index}] needs a source_url or an upload_id.`,
    });
  }
  if (input.source_url !== undefined && input.upload_id !== undefined) {
    throw new ApiError('invalid_parameter', {
      param: `inputs[${index}].upload_id`,
      message: `inputs[${index}] takes a source_url or an upload_id, not both.`,
    });
  }
  return input;
}
