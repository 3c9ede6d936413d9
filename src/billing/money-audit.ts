// The money invariants, checked against the database (`npm run admin -- audit-money`, the chaos
// suite's teardown, and the tests' money helper, test/support/processes.ts): the one owner of the rules.
//
// Per account: its balance is its grants less its captures; its reservation is the holds of its open
// jobs; its open_jobs counts those jobs. Per job: exactly one authorise, for its hold; while open no
// settlement, once ended one capture and/or one release (src/billing/holds.repository.ts writes only the non-zero
// ones) that capture its charge and add up to its hold; its charge is the sum of its items' charges.
//
// Each check is one set-based statement over whole tables (or, given accounts, over their rows by the
// account indexes): the ledger and the items are aggregated once and joined to the accounts and the
// jobs, never a statement per row, so it reads each table once whatever their size (docs/operations.md
// shows its plan and time on a seeded database). A job removed by the retention purge takes its items
// with it and is no longer checked; its ledger rows stay and still count in its account's balance.
import type { ClientBase } from 'pg';

/** A rule an account or a job breaks, with the numbers that show it. */
export interface MoneyProblem {
  subject: 'account' | 'job';
  id: string;
  account_id: string;
  rule: string;
  numbers: Record<string, string | number>;
}

/**
 * The rules, each a boolean column of the statements below (true: kept). A row is returned only when
 * one of them is false, and each false one names a problem.
 */
const ACCOUNT_RULES = {
  balance_is_grants_less_captures: 'balance = grants − captures',
  reserved_is_open_holds: 'reserved = the holds of its open jobs',
  open_jobs_counted: 'open_jobs = its open jobs',
} as const;

const JOB_RULES = {
  one_authorise_for_hold: 'one authorise per job, for its hold',
  settled_once: 'no settlement while open, one capture and/or one release once ended',
  capture_is_charge: 'captured = charged, captured + released = held',
  charge_is_items_sum: "charge = the sum of its items' charges",
} as const;

/** `column = ANY(accounts)`, or true for every account (the plan folds the constant away). */
const inScope = (column: string) => `($1::text[] IS NULL OR ${column} = ANY($1::text[]))`;

const accountsSql = `
  WITH ledger AS (
    SELECT account_id,
           COALESCE(SUM(credits) FILTER (WHERE kind = 'grant'), 0) AS grants,
           COALESCE(SUM(credits) FILTER (WHERE kind = 'capture'), 0) AS captures
      FROM credit_ledger WHERE ${inScope('account_id')} GROUP BY account_id
  ), open AS (
    SELECT account_id, SUM(estimated_credits) AS held, COUNT(*) AS jobs
      FROM jobs WHERE status = ANY($2::text[]) AND ${inScope('account_id')} GROUP BY account_id
  ), checked AS (
    SELECT a.id, a.balance_credits, a.reserved_credits, a.open_jobs,
           COALESCE(l.grants, 0) AS grants, COALESCE(l.captures, 0) AS captures,
           COALESCE(o.held, 0) AS held, COALESCE(o.jobs, 0) AS counted_open_jobs
      FROM accounts a LEFT JOIN ledger l ON l.account_id = a.id LEFT JOIN open o ON o.account_id = a.id
     WHERE ${inScope('a.id')}
  )
  SELECT id, id AS account_id, balance_credits::text, reserved_credits::text, open_jobs, grants::text,
         captures::text, held::text, counted_open_jobs::int,
         balance_credits = grants - captures AS balance_is_grants_less_captures,
         reserved_credits = held AS reserved_is_open_holds,
         open_jobs = counted_open_jobs AS open_jobs_counted
    FROM checked
   WHERE NOT (balance_credits = grants - captures AND reserved_credits = held AND open_jobs = counted_open_jobs)
   ORDER BY id`;

const jobsSql = `
  WITH moves AS (
    SELECT job_id,
           COUNT(*) FILTER (WHERE kind = 'authorise') AS authorises,
           COALESCE(SUM(credits) FILTER (WHERE kind = 'authorise'), 0) AS authorised,
           COUNT(*) FILTER (WHERE kind = 'capture') AS captures,
           COALESCE(SUM(credits) FILTER (WHERE kind = 'capture'), 0) AS captured,
           COUNT(*) FILTER (WHERE kind = 'release') AS releases,
           COALESCE(SUM(credits) FILTER (WHERE kind = 'release'), 0) AS released
      FROM credit_ledger WHERE job_id IS NOT NULL AND ${inScope('account_id')} GROUP BY job_id
  ), items AS (
    SELECT job_id, SUM(charged_credits) AS charged
      FROM job_items
     WHERE $1::text[] IS NULL OR job_id IN (SELECT id FROM jobs WHERE account_id = ANY($1::text[]))
     GROUP BY job_id
  ), checked AS (
    SELECT j.id, j.account_id, j.status, j.billing_state = 'authorised' AS open, j.estimated_credits,
           j.charged_credits, COALESCE(m.authorises, 0) AS authorises, COALESCE(m.authorised, 0) AS authorised,
           COALESCE(m.captures, 0) AS captures, COALESCE(m.captured, 0) AS captured,
           COALESCE(m.releases, 0) AS releases, COALESCE(m.released, 0) AS released,
           COALESCE(i.charged, 0) AS items_charged
      FROM jobs j LEFT JOIN moves m ON m.job_id = j.id LEFT JOIN items i ON i.job_id = j.id
     WHERE ${inScope('j.account_id')}
  ), ruled AS (
    SELECT *,
           authorises = 1 AND authorised = estimated_credits AS one_authorise_for_hold,
           CASE WHEN open THEN captures + releases = 0
                ELSE captures <= 1 AND releases <= 1 AND captures + releases >= 1 END AS settled_once,
           open OR (captured = charged_credits AND captured + released = estimated_credits) AS capture_is_charge,
           open OR charged_credits = items_charged AS charge_is_items_sum
      FROM checked
  )
  SELECT id, account_id, status, estimated_credits::text, charged_credits::text, authorises::int,
         authorised::text, captures::int, captured::text, releases::int, released::text, items_charged::text,
         one_authorise_for_hold, settled_once, capture_is_charge, charge_is_items_sum
    FROM ruled
   WHERE NOT (one_authorise_for_hold AND settled_once AND capture_is_charge AND charge_is_items_sum)
   ORDER BY id`;

type Ruled<Rules> = { id: string; account_id: string } & Record<keyof Rules, boolean> & Record<string, unknown>;

function problemsOf<Rules extends Record<string, string>>(
  subject: MoneyProblem['subject'],
  rules: Rules,
  found: Ruled<Rules>[],
): MoneyProblem[] {
  return found.flatMap((row) => {
    const numbers = Object.fromEntries(
      Object.entries(row).filter(([name, value]) => !(name in rules) && name !== 'id' && value !== null),
    ) as Record<string, string | number>;
    return (Object.keys(rules) as (keyof Rules & string)[])
      .filter((rule) => row[rule] === false)
      .map((rule) => ({ subject, id: row.id, account_id: row.account_id, rule: rules[rule], numbers }));
  });
}

/**
 * Every broken rule of every account and job (or of the given accounts only), accounts first, each in
 * id order; empty when the money is exact. Both statements read one snapshot (a read-only repeatable-read
 * transaction), so a job ending meanwhile is seen before or after, never half. `client`: a connection of
 * its own, without the service pools' 10 s query timeout (the whole audit reads every table).
 * `openStatuses`: the job statuses that hold credits (the lifecycle's openJobStatuses(), passed in so
 * this file spells none out).
 */
export async function moneyProblems(
  client: ClientBase,
  openStatuses: readonly string[],
  accountIds?: readonly string[],
): Promise<MoneyProblem[]> {
  const scope = accountIds ? [...accountIds] : null;
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    // Two whole-table aggregates gain nothing from JIT: compiling them took 4.5 s of the jobs check's
    // 20.7 s on a million jobs (docs/explain-10m.md#money-audit). SET LOCAL ends with the transaction.
    await client.query('SET LOCAL jit = off');
    const accounts = await client.query<Ruled<typeof ACCOUNT_RULES>>(accountsSql, [scope, [...openStatuses]]);
    const jobs = await client.query<Ruled<typeof JOB_RULES>>(jobsSql, [scope]);
    return [...problemsOf('account', ACCOUNT_RULES, accounts.rows), ...problemsOf('job', JOB_RULES, jobs.rows)];
  } finally {
    await client.query('COMMIT');
  }
}

/** moneyProblems on a connection of its own to `databaseUrl`, closed after. */
export async function auditMoneyAt(
  databaseUrl: string,
  openStatuses: readonly string[],
  accountIds?: readonly string[],
): Promise<MoneyProblem[]> {
  const { Client } = await import('pg');
  const client = new Client({ connectionString: databaseUrl, application_name: 'mediajobs audit-money' });
  await client.connect();
  try {
    return await moneyProblems(client, openStatuses, accountIds);
  } finally {
    await client.end();
  }
}

/** The two statements, for EXPLAIN (docs/explain-10m.md#money-audit); $1 the accounts or null, $2 the open statuses. */
export const MONEY_AUDIT_STATEMENTS = { accounts: accountsSql, jobs: jobsSql } as const;
