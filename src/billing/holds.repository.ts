// Two-phase credit transfers (TigerBeetle style): a hold is taken at submit, then settled (posted,
// fully or less) or released (voided) exactly once. The account's balance and reservation and the
// ledger; and, because every job holds credits from its submit until its ending, the account's open
// jobs (accounts.open_jobs: the concurrency limit and running_jobs). Every method runs inside the
// caller's transaction, so the job's status (src/jobs/job-lifecycle.ts), the money, the open jobs and
// the outbox event change together or not at all.
//
// Open jobs are counted here, in the one UPDATE of the account row that the submit and the ending
// each make, rather than counted on every submit (a heap page per open job, docs/explain-10m.md) or
// kept by an UPDATE of their own: a second UPDATE of a row the transaction already changed runs the
// accounts → plans foreign-key check again, which locks the plan's row FOR KEY SHARE, a row every
// submit of the plan shares. A job holds exactly one hold (authorise at its submit, settle once
// at its ending, from the transaction that flips it from 'authorised'), so the count is exact; the
// migration that added it counts them from the jobs (migrations/1765530000000-account-open-jobs.ts).
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Transaction } from '../common/database/pg-transaction';
import { afterCommit } from '../common/database/after-commit';
import { newId } from '../common/ids';
import { row, rows } from '../common/database/sql';
import { creditsMoved } from '../metrics/job-metrics';
import { appendLedger } from './billing.repository';

export interface LockedAccount {
  id: string;
  status: string;
  subscription_status: string;
  spend_limit_usd: string | null;
  balance_credits: string;
  reserved_credits: string;
  /** The account's jobs queued or processing (counted with their holds, above), for the concurrency limit. */
  open_jobs: number;
}

/** The columns of LockedAccount. */
const ACCOUNT_COLUMNS =
  'id, status, subscription_status, spend_limit_usd, balance_credits, reserved_credits, open_jobs';

/** Credits a new hold may take: the balance less what is already held (the CHECK constraint's sum). */
export function availableCredits(account: Pick<LockedAccount, 'balance_credits' | 'reserved_credits'>): number {
  return Number(account.balance_credits) - Number(account.reserved_credits);
}

/** A hold a new job asks for. */
export interface NewHold {
  accountId: string;
  jobId: string;
  credits: number;
}

/** A hold to settle: `chargedCredits` (already capped at the hold) are captured, the rest released. */
export interface HoldSettlement {
  accountId: string;
  jobId: string;
  heldCredits: number;
  chargedCredits: number;
}

/**
 * The credit holds of jobs. Stateless: each method takes the caller's transaction, which holds the locks
 * the money needs (the account's row; at an ending, the job's).
 */
@Injectable()
export class HoldsRepository {
  /**
   * Locks the accounts' rows (one submit's, or those of the submits of one event-loop turn: see
   * src/jobs/job-admission.ts): concurrent submits for one account queue here, so checks and hold agree.
   * FOR NO KEY UPDATE, the lock an UPDATE of the balance takes, so every money change still waits for it;
   * FOR UPDATE would also block the key-share lock that each insert referencing the account takes (an
   * Idempotency-Key's claim, an upload), so in a submit storm those short writes queued behind every
   * submit's transaction, each holding a database connection (behind PgBouncer, a server connection).
   * The rows are locked in the order of their ids, so two transactions locking several never wait on
   * each other in a cycle. With 'skip locked', rows another transaction holds are left out of the
   * answer instead of waited for (as are accounts that do not exist).
   */
  async lockAccounts(
    manager: Transaction,
    accountIds: string[],
    lock: 'wait' | 'skip locked' = 'wait',
  ): Promise<Map<string, LockedAccount>> {
    const skip = lock === 'skip locked';
    const locked = await rows<LockedAccount>(
      manager,
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE${skip ? ' SKIP LOCKED' : ''}`,
      [accountIds],
      { prepared: skip ? 'accounts-lock-skip-locked' : 'accounts-lock' },
    );
    const byId = new Map(locked.map((account) => [account.id, account]));
    if (!skip) for (const id of accountIds) if (!byId.has(id)) throw new Error(`account ${id} not found`);
    return byId;
  }

  /** The account's row without the lock, for a look that takes no hold (the estimate). */
  async readAccount(manager: Transaction, accountId: string): Promise<LockedAccount> {
    const account = await row<LockedAccount>(
      manager,
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`,
      [accountId],
      {
        prepared: 'account-read',
      },
    );
    if (!account) throw new Error(`account ${accountId} not found`);
    return account;
  }

  /**
   * Reserves each hold's credits for its job, and counts the job among its account's open jobs, in one
   * statement for all of them (at most one hold per account: the UPDATE joins each account to one).
   * Returns the jobs whose hold was taken; a hold the available balance does not cover changes nothing.
   * The caller checked the balance on the locked row; the CHECK constraint (balance − reserved ≥ 0) is
   * the backstop should this code ever be wrong.
   */
  async authorise(manager: Transaction, holds: NewHold[]): Promise<Set<string>> {
    if (new Set(holds.map((hold) => hold.accountId)).size !== holds.length)
      throw new Error('authorise takes one hold per account');
    // The holds and their ledger rows (appendLedger's columns) in one statement: a row is written only
    // for a hold taken, with the balance and reservation the hold left.
    const entries = await rows<{ job_id: string; credits: string }>(
      manager,
      `WITH wanted AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) AS w(account_id, job_id, credits, ledger_id)
       ), held AS (
         UPDATE accounts SET reserved_credits = reserved_credits + w.credits, open_jobs = open_jobs + 1, updated_at = now()
           FROM wanted w
          WHERE accounts.id = w.account_id AND balance_credits - reserved_credits >= w.credits
          RETURNING accounts.id, balance_credits, reserved_credits
       )
       INSERT INTO credit_ledger (id, account_id, kind, credits, job_id, reason, balance_after, reserved_after)
       SELECT w.ledger_id, w.account_id, 'authorise', w.credits, w.job_id, NULL, held.balance_credits, held.reserved_credits
         FROM held JOIN wanted w ON w.account_id = held.id
       RETURNING job_id, credits`,
      [
        holds.map((hold) => hold.accountId),
        holds.map((hold) => hold.jobId),
        holds.map((hold) => hold.credits),
        holds.map(() => newId('led')),
      ],
      { prepared: 'holds-authorise' },
    );
    const credits = entries.reduce((sum, entry) => sum + Number(entry.credits), 0);
    if (credits > 0) afterCommit(manager, () => creditsMoved('authorised', credits));
    return new Set(entries.map((entry) => entry.job_id));
  }

  /**
   * Posts a hold (charging `chargedCredits`) and voids the rest of it; 0 voids it all; its job leaves
   * the account's open jobs. Settling once is the caller's duty: the job lifecycle calls this only from
   * the transaction that flipped the job's billing state away from 'authorised', so a retried or
   * duplicated worker never charges twice.
   */
  async settle(manager: EntityManager, hold: HoldSettlement): Promise<void> {
    const { accountId, jobId, heldCredits, chargedCredits } = hold;
    const [after] = await rows<{ balance_credits: string; reserved_credits: string }>(
      manager,
      `UPDATE accounts SET balance_credits = balance_credits - $2, reserved_credits = reserved_credits - $3,
              open_jobs = open_jobs - 1, updated_at = now()
        WHERE id = $1 RETURNING balance_credits, reserved_credits`,
      [accountId, chargedCredits, heldCredits],
    );
    if (chargedCredits > 0) await ledgerRow(manager, accountId, 'capture', chargedCredits, jobId, after);
    if (heldCredits - chargedCredits > 0)
      await ledgerRow(manager, accountId, 'release', heldCredits - chargedCredits, jobId, after);
    afterCommit(
      manager,
      () => (creditsMoved('captured', chargedCredits), creditsMoved('released', heldCredits - chargedCredits)),
    );
  }
}

function ledgerRow(
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
