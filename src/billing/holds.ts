// Two-phase credit transfers (TigerBeetle style): a hold is taken at submit, then settled (posted,
// fully or less) or released (voided) exactly once. Every function runs inside the caller's
// transaction, so the job row, the money and the outbox event change together or not at all.
import type { EntityManager } from 'typeorm';
import { row, rows } from '../common/database/sql';
import { appendLedger } from './billing.repository';

export interface LockedAccount {
  id: string;
  status: string;
  subscription_status: string;
  spend_limit_usd: string | null;
  balance_credits: string;
  reserved_credits: string;
}

/** Locks the account row: concurrent submits for one account queue here, so checks and hold agree. */
export async function lockAccount(manager: EntityManager, accountId: string): Promise<LockedAccount> {
  const rows: LockedAccount[] = await manager.query(
    `SELECT id, status, subscription_status, spend_limit_usd, balance_credits, reserved_credits FROM accounts WHERE id = $1 FOR UPDATE`,
    [accountId],
  );
  if (!rows[0]) throw new Error(`account ${accountId} not found`);
  return rows[0];
}

function ledger(
  manager: EntityManager,
  accountId: string,
  kind: 'authorise' | 'capture' | 'release',
  credits: number,
  jobId: string,
  after: { balance_credits: string; reserved_credits: string },
): Promise<unknown> {
  return appendLedger(manager, {
    accountId,
    kind,
    credits,
    jobId,
    balanceAfter: after.balance_credits,
    reservedAfter: after.reserved_credits,
  });
}

/**
 * Reserves `credits` for a job. Returns false when the available balance does not cover it; the
 * CHECK constraint (balance − reserved ≥ 0) is the backstop should this code ever be wrong.
 */
export async function authoriseHold(
  manager: EntityManager,
  accountId: string,
  jobId: string,
  credits: number,
): Promise<boolean> {
  const after = await row<{ balance_credits: string; reserved_credits: string }>(
    manager,
    `UPDATE accounts SET reserved_credits = reserved_credits + $2, updated_at = now()
      WHERE id = $1 AND balance_credits - reserved_credits >= $2 RETURNING balance_credits, reserved_credits`,
    [accountId, credits],
  );
  if (!after) return false;
  await ledger(manager, accountId, 'authorise', credits, jobId, after);
  return true;
}

export interface SettlementResult {
  /** False when the hold was already settled or released: nothing was charged this time. */
  applied: boolean;
  chargedCredits: number;
}

/**
 * Settles the job's hold: charges `charge` (capped at the hold) and releases the rest; `charge` 0
 * releases it all. Idempotent: only the transaction that flips billing_state from 'authorised'
 * moves money, so a retried or duplicated worker can never charge twice.
 */
export async function settleHold(
  manager: EntityManager,
  jobId: string,
  charge: number,
  terminal: { status: string; extraSet?: string; extraParams?: unknown[] },
): Promise<SettlementResult> {
  const billingState =
    charge > 0 || terminal.status === 'succeeded' || terminal.status === 'partially_succeeded' ? 'settled' : 'released';
  const extra = terminal.extraSet ? `, ${terminal.extraSet}` : '';
  const job = await row<{ account_id: string; estimated_credits: string; charged_credits: string }>(
    manager,
    `UPDATE jobs SET billing_state = $2, charged_credits = LEAST($3::bigint, estimated_credits), status = $4,
            finished_at = now()${extra}
      WHERE id = $1 AND billing_state = 'authorised' RETURNING account_id, estimated_credits, charged_credits`,
    [jobId, billingState, charge, terminal.status, ...(terminal.extraParams ?? [])],
  );
  if (!job) return { applied: false, chargedCredits: 0 };
  const estimated = Number(job.estimated_credits);
  const charged = Number(job.charged_credits);
  const [after] = await rows<{ balance_credits: string; reserved_credits: string }>(
    manager,
    `UPDATE accounts SET balance_credits = balance_credits - $2, reserved_credits = reserved_credits - $3, updated_at = now()
      WHERE id = $1 RETURNING balance_credits, reserved_credits`,
    [job.account_id, charged, estimated],
  );
  if (charged > 0) await ledger(manager, job.account_id, 'capture', charged, jobId, after);
  if (estimated - charged > 0) await ledger(manager, job.account_id, 'release', estimated - charged, jobId, after);
  return { applied: true, chargedCredits: charged };
}
