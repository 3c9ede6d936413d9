import { api, type Credits, type Usage } from '../api';
import { DailyChargesChart } from '../chart';
import { formatDate, formatNumber, formatUsd, percent } from '../format';
import { Link } from '../router';
import { ErrorNotice, Loading, PageTitle, Progress, useLoad } from '../ui';

/** Money, limits and use this month, and the last 30 days of charges: two API calls. */
export function OverviewPage() {
  const loaded = useLoad('overview', () =>
    Promise.all([
      api<Credits>('GET', '/v1/account/credits'),
      api<Usage>('GET', '/v1/account/usage', { query: { days: 30 } }),
    ]),
  );
  return (
    <>
      <PageTitle>Overview</PageTitle>
      {loaded.error ? <ErrorNotice error={loaded.error} /> : null}
      {!loaded.data ? (
        !loaded.error && <Loading what="your balance" />
      ) : (
        <Overview credits={loaded.data[0]} usage={loaded.data[1]} />
      )}
    </>
  );
}

function Overview({ credits, usage }: { credits: Credits; usage: Usage }) {
  const quota = credits.quota.processing_minutes_limit;
  const cap = credits.spend_limit_usd;
  const limits = credits.limits;
  return (
    <>
      <section aria-labelledby="credits-heading" className="cards">
        <h2 id="credits-heading" className="visually-hidden">
          Credits
        </h2>
        <div className="card stat">
          <p className="stat-label">Balance</p>
          <p className="stat-value">{formatNumber(credits.balance_credits)}</p>
          <p className="hint">credits</p>
        </div>
        <div className="card stat">
          <p className="stat-label">Reserved</p>
          <p className="stat-value">{formatNumber(credits.reserved_credits)}</p>
          <p className="hint">held for running jobs</p>
        </div>
        <div className="card stat">
          <p className="stat-label">Available</p>
          <p className="stat-value">{formatNumber(credits.available_credits)}</p>
          <p className="hint">for new jobs</p>
        </div>
      </section>
      {credits.available_credits === 0 && (
        <p className="notice notice-warning" role="status">
          No credits available: new jobs answer <code>insufficient_credits</code>.{' '}
          <Link to="/billing">See where credits come from</Link>.
        </p>
      )}

      <section aria-labelledby="plan-heading" className="card">
        <h2 id="plan-heading">
          Plan: {credits.plan}
          <span className="muted">
            {' '}
            · this month since {formatDate(credits.period_start)}, resets {formatDate(credits.period_resets_at)}
          </span>
        </h2>
        <dl className="limits">
          {limits && (
            <>
              <dt>Concurrent jobs</dt>
              <dd>
                {credits.running_jobs !== undefined ? (
                  <Progress
                    label="Jobs running against the concurrency limit"
                    value={credits.running_jobs}
                    max={limits.concurrent_jobs}
                    text={`${credits.running_jobs} running of ${limits.concurrent_jobs}`}
                  />
                ) : (
                  <>up to {limits.concurrent_jobs} at once</>
                )}
              </dd>
            </>
          )}
          <dt>Processing minutes</dt>
          <dd>
            {quota === null ? (
              <>{formatNumber(credits.quota.processing_minutes_used)} used · no monthly limit</>
            ) : (
              <Progress
                label="Processing minutes used this month"
                value={Math.min(credits.quota.processing_minutes_used, quota)}
                max={quota}
                text={`${formatNumber(credits.quota.processing_minutes_used)} of ${formatNumber(quota)} minutes (${percent(credits.quota.processing_minutes_used, quota)} %)`}
              />
            )}
          </dd>
          <dt>Spend this month</dt>
          <dd>
            {cap === null ? (
              <>
                {formatUsd(credits.spent_usd)} · no spend cap <Link to="/settings">Set one</Link>
              </>
            ) : (
              <Progress
                label="Spend this month against the spend cap"
                value={Math.min(credits.spent_usd, cap)}
                max={Math.max(cap, 0.01)}
                text={`${formatUsd(credits.spent_usd)} of ${formatUsd(cap)} cap`}
              />
            )}
          </dd>
          {limits && (
            <>
              <dt>Requests per second</dt>
              <dd>{limits.requests_per_second}</dd>
              <dt>APIs</dt>
              <dd>{limits.apis.join(', ')}</dd>
              <dt>Largest output</dt>
              <dd>{limits.max_output_height}p</dd>
            </>
          )}
        </dl>
      </section>

      <section aria-labelledby="chart-heading" className="card">
        <h2 id="chart-heading">Credits charged per day</h2>
        {usage.total_charged_credits === 0 ? (
          <p className="empty-inline">
            Nothing charged in the last 30 days. <Link to="/jobs/new">Start a job</Link> or create an{' '}
            <Link to="/keys">API key</Link> to submit from your code.
          </p>
        ) : (
          <DailyChargesChart usage={usage} />
        )}
      </section>
    </>
  );
}
