// The settings of two side services, each checked as a whole: metrics (who may read them, where the
// worker serves them) and the dashboard (mail, sessions, sign-in limits, the built app).
import { resolve } from 'node:path';
import type { AppConfig } from './app-config';
import { ConfigError, int, url, type Env } from './env-values';

const LOOPBACK_HOSTS = ['127.0.0.1', '::1', 'localhost'];

/**
 * Metrics: an optional bearer token for `/metrics`, and the worker's own metrics port. In production
 * without a token, metrics stay on loopback: the worker may not bind elsewhere (and the API answers
 * only loopback clients, see metrics-access.ts).
 */
export function metricsConfig(
  env: Env,
  nodeEnv: string,
): Pick<AppConfig, 'metricsToken' | 'workerMetricsPort' | 'workerMetricsHost'> {
  const metricsToken = env.METRICS_TOKEN || null;
  if (metricsToken !== null && metricsToken.length < 16)
    throw new ConfigError('METRICS_TOKEN must be at least 16 characters.');
  const port = env.WORKER_METRICS_PORT ? int(env, 'WORKER_METRICS_PORT', 0, 0, 65535) : null;
  const host = env.WORKER_METRICS_HOST || '127.0.0.1';
  if (nodeEnv === 'production' && port !== null && !metricsToken && !LOOPBACK_HOSTS.includes(host))
    throw new ConfigError(
      `WORKER_METRICS_HOST=${host} exposes metrics beyond loopback: set METRICS_TOKEN too (production).`,
    );
  return { metricsToken, workerMetricsPort: port, workerMetricsHost: host };
}

/** The dashboard's settings: mail, sessions, sign-in limits and where the built app is. */
export function dashboardConfig(
  env: Env,
  publicBaseUrl: string,
): Pick<
  AppConfig,
  | 'smtpUrl'
  | 'mailFrom'
  | 'sessionIdleTimeoutSeconds'
  | 'sessionAbsoluteTimeoutSeconds'
  | 'signInAttemptsPerMinute'
  | 'dashboardDir'
> {
  const smtpUrl = env.SMTP_URL ? url(env, 'SMTP_URL', '', ['smtp:', 'smtps:']) : null;
  const mailFrom = env.MAIL_FROM || `mediajobs <no-reply@${new URL(publicBaseUrl).hostname}>`;
  // A bare address or "Name <address>": what nodemailer and every SMTP server accept as From.
  if (!/^(?:[^<>@\r\n]+ <[^<>@\s]+@[^<>@\s]+>|[^<>@\s]+@[^<>@\s]+)$/.test(mailFrom))
    throw new ConfigError(`MAIL_FROM must be an email address or "Name <address>"; got "${mailFrom}".`);
  const sessionIdleTimeoutSeconds = int(env, 'SESSION_IDLE_TIMEOUT_SECONDS', 7200, 60, 30 * 86400);
  const sessionAbsoluteTimeoutSeconds = int(env, 'SESSION_ABSOLUTE_TIMEOUT_SECONDS', 86400, 60, 90 * 86400);
  if (sessionAbsoluteTimeoutSeconds < sessionIdleTimeoutSeconds)
    throw new ConfigError('SESSION_ABSOLUTE_TIMEOUT_SECONDS must be at least SESSION_IDLE_TIMEOUT_SECONDS.');
  return {
    smtpUrl,
    mailFrom,
    sessionIdleTimeoutSeconds,
    sessionAbsoluteTimeoutSeconds,
    signInAttemptsPerMinute: int(env, 'SIGN_IN_ATTEMPTS_PER_MINUTE', 10, 1, 1000),
    dashboardDir: resolve(env.DASHBOARD_DIR || './dashboard/dist'),
  };
}
