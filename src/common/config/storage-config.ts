// STORAGE_BACKEND and, for s3, the bucket and how to reach it (docs/api-decisions.md §11).
import type { AppConfig } from './app-config';
import { ConfigError, url, type Env } from './env-values';

export function storageConfig(env: Env): AppConfig['storage'] {
  const backend = env.STORAGE_BACKEND || 'local';
  if (backend === 'local') return { backend };
  if (backend !== 's3') throw new ConfigError(`STORAGE_BACKEND must be local or s3; got "${backend}".`);
  const bucket = env.S3_BUCKET ?? '';
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new ConfigError(
      `S3_BUCKET must be set to a bucket name (3-63 characters of a-z, 0-9, "." and "-") when STORAGE_BACKEND=s3; got "${bucket}".`,
    );
  let prefix = (env.S3_PREFIX ?? '').trim();
  if (prefix.startsWith('/') || prefix.includes('..'))
    throw new ConfigError(`S3_PREFIX must not start with "/" or contain ".."; got "${prefix}".`);
  if (prefix && !prefix.endsWith('/')) prefix += '/';
  const endpoint = env.S3_ENDPOINT ? url(env, 'S3_ENDPOINT', '', ['http:', 'https:']) : null;
  const region = env.S3_REGION || 'us-east-1';
  if (!/^[a-z0-9-]{1,40}$/.test(region))
    throw new ConfigError(`S3_REGION must be a region name such as us-east-1; got "${region}".`);
  const pathStyle = env.S3_FORCE_PATH_STYLE || (endpoint ? 'true' : 'false');
  if (pathStyle !== 'true' && pathStyle !== 'false')
    throw new ConfigError(`S3_FORCE_PATH_STYLE must be true or false; got "${pathStyle}".`);
  const accessKeyId = env.AWS_ACCESS_KEY_ID || '';
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY || '';
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey))
    throw new ConfigError(
      'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together (or neither, for the SDK default chain).',
    );
  return {
    backend,
    bucket,
    prefix,
    endpoint,
    region,
    forcePathStyle: pathStyle === 'true',
    credentials: accessKeyId ? { accessKeyId, secretAccessKey } : null,
  };
}
