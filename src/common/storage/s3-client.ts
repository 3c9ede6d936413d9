// The one S3 client of a process, with the settings every S3-compatible store here needs
// (docs/operations.md, "S3-compatible stores"): explicit endpoint and path style, checksums only when required (streamed
// bodies otherwise go "aws-chunked", which Swift and radosgw refuse), bounded timeouts so an outage
// fails a call instead of hanging it, and Content-MD5 on DeleteObjects (Swift requires it).
import { S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';

export interface S3Settings {
  bucket: string;
  /** '' or ending in '/'. */
  prefix: string;
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
  /** null: the SDK's default chain (instance role, ~/.aws, …). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
}

/** A store that does not connect within this long is down. */
export const S3_CONNECT_TIMEOUT_MS = 5_000;
/** Request sent and response headers back within this long, or the call fails (and is retried). */
export const S3_REQUEST_TIMEOUT_MS = 120_000;
/** No byte either way for this long while a body streams: the store hung. */
export const S3_IDLE_TIMEOUT_MS = 30_000;

export function createS3Client(settings: S3Settings): S3Client {
  const client = new S3Client({
    region: settings.region,
    endpoint: settings.endpoint ?? undefined,
    forcePathStyle: settings.forcePathStyle,
    credentials: settings.credentials ?? undefined,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
    requestHandler: {
      connectionTimeout: S3_CONNECT_TIMEOUT_MS,
      requestTimeout: S3_REQUEST_TIMEOUT_MS,
      throwOnRequestTimeout: true,
      socketTimeout: S3_IDLE_TIMEOUT_MS,
    },
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { headers?: Record<string, string>; body?: unknown };
      if (context.commandName === 'DeleteObjectsCommand' && request.headers && typeof request.body === 'string') {
        request.headers['content-md5'] = createHash('md5').update(request.body).digest('base64');
      }
      return next(args);
    },
    { step: 'build', name: 'mediajobsContentMd5', override: true },
  );
  return client;
}
