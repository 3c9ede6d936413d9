import pino, { type Logger } from 'pino';
import type { AppConfig } from './config/config';

/** Headers that carry secrets: never written to a log line. */
export const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers["x-admin-token"]',
  'req.headers["x-license-token"]',
  'req.headers.authorization',
  'req.headers.cookie',
];

export function createLogger(config: AppConfig, name: string): Logger {
  return pino({ name, level: config.logLevel, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } });
}
