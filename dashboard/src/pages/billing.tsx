import {
  api,
  LEDGER_KINDS,
  type Account,
  type Credits,
  type LedgerEntry,
  type LedgerKind,
  type List,
  type MonthlySpend,
} from '../api';
import { formatNumber, formatTime, formatUsd, percent } from '../format';
import { Link, navigate, useLocation } from '../router';
import { EmptyState, ErrorNotice, Loading, PageTitle, Progress, useLoad } from '../ui';

const PAGE_SIZE = 25;

const KIND_LABELS: Record<LedgerKind, string> = {
  grant: 'Added',
  authorise: 'Held for a job',
  capture: 'Charged',
  release: 'Hold returned',
};

/** A picked day (YYYY-MM-DD) and the next one, as the ledger's UTC bounds: `to` includes its whole day. */
function bounds(from: string, to: string): { created_gte?: string; created_lt?: string } {
  const next = to ? new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString() : undefined;
  return { created_gte: from ? `${from}T00:00:00Z` : undefined, created_lt: next };
}

/**
 * Where credits come from and where they went: the balance and the top-up link, charges per month
 * against the spend cap, and the ledger (filter, pages, CSV export of everything the filter keeps).
 * Four API calls (the account's own, for the month it was opened).
 */
export function BillingPage() {
  const { search } = useLocation();
  const kind = search.get('kind') ?? '';
  const from = search.get('from') ?? '';
  const to = search.get('to') ?? '';
  const after = search.get('starting_after') ?? '';
  const filter = { kind: kind || undefined, ...bounds(from, to) };
  const summary = useLoad('billing:summary', () =>
    Promise.all([
      api<Credits>('GET', '/v1/account/credits'),
      api<MonthlySpend>('GET', '/v1/account/monthly-spend', { query: { months: 6 } }),
      api<Account>('GET', '/v1/account'),
    ]),
  );
  const ledger = useLoad(`billing:ledger:${kind}:${from}:${to}:${after}`, () =>
    api<List<LedgerEntry>>('GET', '/v1/account/ledger', {
      query: { ...filter, limit: PAGE_SIZE, starting_after: after },
    }),
  );
  const go = (changes: Record<string, string>) => {
    const next = new URLSearchParams({ kind, from, to, starting_after: after, ...changes });
    for (const [name, value] of [...next.entries()]) if (!value) next.delete(name);
    const query = next.toString();
    navigate(`/billing${query ? `?${query}` : ''}`);
  };
  const exportUrl = new URL('/v1/account/ledger/export', window.location.origin);
  for (const [name, value] of Object.entries(filter)) if (value) exportUrl.searchParams.set(name, value);

  return (
    <>
      <PageTitle>Billing</PageTitle>
      {summary.error ? <ErrorNotice error={summary.error} /> : null}
      {!summary.data ? (
        !summary.error && <Loading what="your balance" />
      ) : (
        <>
          <Balance credits={summary.data[0]} />
          <SpendPerMonth spend={summary.data[1]} opened={summary.data[2].created_at} />
        </>
      )}

      <section aria-labelledby="ledger-heading">
        <h2 id="ledger-heading">Ledger</h2>
        <p className="hint">
          Every credit movement, newest first. Times are UTC; the dates below include their whole day.
        </p>
        <div className="toolbar">
          <div className="field inline">
            <label htmlFor="ledger-kind">Kind</label>
            <select
              id="ledger-kind"
              value={kind}
              onChange={(event) => go({ kind: event.target.value, starting_after: '' })}
            >
              <option value="">Any</option>
              {LEDGER_KINDS.map((value) => (
                <option key={value} value={value}>
                  {KIND_LABELS[value]} ({value})
                </option>
              ))}
            </select>
          </div>
          <div className="field inline">
            <label htmlFor="ledger-from">From</label>
            <input
              id="ledger-from"
              type="date"
              value={from}
              onChange={(event) => go({ from: event.target.value, starting_after: '' })}
            />
          </div>
          <div className="field inline">
            <label htmlFor="ledger-to">To</label>
            <input
              id="ledger-to"
              type="date"
              value={to}
              onChange={(event) => go({ to: event.target.value, starting_after: '' })}
            />
          </div>
          <a className="button" href={exportUrl.pathname + exportUrl.search} download>
            Export CSV
          </a>
        </div>
        <p className="hint">The export holds every entry these filters keep, not only this page.</p>
        {ledger.error ? <ErrorNotice error={ledger.error} /> : null}
        {!ledger.data ? (
          !ledger.error && <Loading what="the ledger" />
        ) : ledger.data.data.length === 0 ? (
          <EmptyState title={kind || from || to ? 'No entries match these filters' : 'No credit movements yet'}>
            {after ? (
              <button type="button" onClick={() => go({ starting_after: '' })}>
                Back to the first page
              </button>
            ) : kind || from || to ? (
              <button type="button" onClick={() => go({ kind: '', from: '', to: '', starting_after: '' })}>
                Clear the filters
              </button>
            ) : (
              'Credits added to the account, and every job’s hold and charge, appear here.'
            )}
          </EmptyState>
        ) : (
          <>
            <LedgerTable entries={ledger.data.data} />
            <div className="pager">
              {after && (
                <button type="button" onClick={() => go({ starting_after: '' })}>
                  First page
                </button>
              )}
              {ledger.data.has_more && ledger.data.next_cursor && (
                <button type="button" onClick={() => go({ starting_after: ledger.data!.next_cursor! })}>
                  Next page
                </button>
              )}
            </div>
          </>
        )}
      </section>
    </>
  );
}

function Balance({ credits }: { credits: Credits }) {
  return (
    <section className="card" aria-labelledby="balance-heading">
      <h2 id="balance-heading">Credits</h2>
      <dl className="facts">
        <dt>Balance</dt>
        <dd>{formatNumber(credits.balance_credits)} credits</dd>
        <dt>Held for running jobs</dt>
        <dd>{formatNumber(credits.reserved_credits)} credits</dd>
        <dt>Available for new jobs</dt>
        <dd>{formatNumber(credits.available_credits)} credits</dd>
      </dl>
      {credits.topup_url ? (
        <p>
          <a className="button primary" href={credits.topup_url} target="_blank" rel="noopener noreferrer">
            Buy credits
          </a>{' '}
          <span className="hint">on your provider’s top-up page (opens in a new tab).</span>
        </p>
      ) : (
        <p>Credits are added by your mediajobs operator: ask them for a top-up.</p>
      )}
    </section>
  );
}

function monthName(month: string): string {
  return new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(
    new Date(`${month}-01T00:00:00Z`),
  );
}

/** The months the account existed, newest first: a new account has no empty rows for months before it. */
function SpendPerMonth({ spend, opened }: { spend: MonthlySpend; opened: string }) {
  const cap = spend.spend_limit_usd;
  const firstMonth = opened.slice(0, 7);
  const months = spend.months.filter((month) => month.month >= firstMonth || month.charged_credits > 0).reverse();
  return (
    <section className="card" aria-labelledby="spend-heading">
      <h2 id="spend-heading">Spend per month</h2>
      <p className="hint">
        Charges per calendar month (UTC), at your plan’s price per credit.{' '}
        {cap === null ? (
          <>
            No spend cap is set. <Link to="/settings">Set one</Link> to stop a runaway script.
          </>
        ) : (
          <>The spend cap of {formatUsd(cap)} applies to this month; earlier months are shown against today’s cap.</>
        )}
      </p>
      <table className="stack">
        <caption className="visually-hidden">Charges per month, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Month</th>
            <th scope="col">Credits charged</th>
            <th scope="col">USD</th>
            <th scope="col">Against the cap</th>
          </tr>
        </thead>
        <tbody>
          {months.map((month, index) => (
            <tr key={month.month}>
              <td data-label="Month">
                {monthName(month.month)}
                {index === 0 && <span className="hint"> (this month)</span>}
              </td>
              <td data-label="Credits">{formatNumber(month.charged_credits)}</td>
              <td data-label="USD">{formatUsd(month.charged_usd)}</td>
              <td data-label="Cap">
                {cap === null ? (
                  'no cap'
                ) : (
                  <Progress
                    label={`Spend in ${monthName(month.month)} against the spend cap`}
                    value={Math.min(month.charged_usd, cap)}
                    max={Math.max(cap, 0.01)}
                    text={`${percent(month.charged_usd, cap)} % of ${formatUsd(cap)}`}
                  />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function LedgerTable({ entries }: { entries: LedgerEntry[] }) {
  return (
    <table className="stack">
      <caption className="visually-hidden">Ledger entries, newest first</caption>
      <thead>
        <tr>
          <th scope="col">When (UTC)</th>
          <th scope="col">Kind</th>
          <th scope="col">Credits</th>
          <th scope="col">Job or reason</th>
          <th scope="col">Balance after</th>
          <th scope="col">Held after</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((entry) => (
          <tr key={entry.id}>
            <td data-label="When">{formatTime(entry.created_at)}</td>
            <td data-label="Kind">
              {KIND_LABELS[entry.kind]} <span className="hint">({entry.kind})</span>
            </td>
            <td data-label="Credits">{formatNumber(entry.credits)}</td>
            <td data-label="Job or reason">
              {entry.job_id ? (
                <Link to={`/jobs/${entry.job_id}`}>
                  <code className="id">{entry.job_id}</code>
                </Link>
              ) : (
                (entry.reason ?? '—')
              )}
            </td>
            <td data-label="Balance after">{formatNumber(entry.balance_after)}</td>
            <td data-label="Held after">{formatNumber(entry.reserved_after)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
