// Step 8 of a submit and the job itself (docs/api-decisions.md §2): the account's row locked, its state
// checked again, the limits checked, the credits held, the job inserted and, with an Idempotency-Key,
// its 202 stored — in one transaction, for the submits of one event-loop turn together.
//
// Why together: under load submits reach this step in bursts (one Redis reply or one poll of the
// sockets lets several through at once). At 20 connections, bench/profile-submits counted 3 submits per
// turn on average, and each paid for its own transaction: seven round trips, each a statement that
// PostgreSQL binds, plans and runs, and a socket write and a wake-up on both sides. Together they share
// the seven statements, each taking every submit's values as arrays.
//
// Each submit is still decided as if it were alone:
// - its account's row is locked before its limits are read, so it sees every hold and job of the
//   account's submits before it; an account is in a transaction once (its second submit of a turn goes
//   in one of its own, which waits for the lock as separate requests always did);
// - a refusal (a limit, the account's state) is its submit's answer and changes nothing, so the others
//   go on; each submit's queue-depth check also counts the jobs admitted before it in the transaction;
// - anything else that goes wrong rolls the whole transaction back, and every submit of it then runs
//   again in a transaction of its own, so no submit fails for another's sake.
import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { billingPeriod } from '../billing/billing-period';
import { authoriseHolds, lockAccounts } from '../billing/holds';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import type { PgTransaction } from '../common/database/pg-transaction';
import { TurnBatch } from '../common/database/turn-batch';
import { storeIdempotentResponses, type IdempotencyClaim } from '../common/idempotency/idempotent-response';
import { jobSubmitted } from '../metrics/job-metrics';
import { accountStateRefusal } from './account-state';
import { jobLocation, toJobView, type JobView } from './job-view';
import { JobsRepository, type NewJob } from './jobs.repository';
import { SubmitLimits } from './limits';

/** A submit that passed steps 1–7: its job as it is to be inserted. */
export interface Admission {
  caller: AuthContext;
  job: NewJob;
  /** The request's claimed Idempotency-Key: its 202 is stored in the job's own transaction. */
  idempotency?: IdempotencyClaim;
}

/** A submit's answer: its job's view, or why not (a refusal, or what went wrong). */
type Outcome = JobView | Error;

@Injectable()
export class JobAdmission {
  private readonly turn = new TurnBatch<Admission, Outcome>((admissions) => this.admitTurn(admissions));

  constructor(
    private readonly jobs: JobsRepository,
    private readonly limits: SubmitLimits,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Admits the job, or throws the submit's refusal. Once this returns, the job, its hold and its stored
   * 202 are committed: nothing after it may fail the request (a 503 would tell the client to retry a
   * job that exists and holds credits).
   */
  async admit(admission: Admission): Promise<JobView> {
    const outcome = await this.turn.load(admission);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  private async admitTurn(admissions: Admission[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = new Array<Outcome>(admissions.length);
    const together: number[] = [];
    const alone: number[] = [];
    const accounts = new Set<string>();
    admissions.forEach((admission, n) => {
      const account = admission.job.accountId;
      (accounts.has(account) ? alone : together).push(n);
      accounts.add(account);
    });
    const run = async (indexes: number[]): Promise<void> => {
      const answers = await this.admitTogether(indexes.map((n) => admissions[n]));
      answers.forEach((answer, k) => (outcomes[indexes[k]] = answer));
    };
    await Promise.all([run(together), ...alone.map((n) => run([n]))]);
    return outcomes;
  }

  private async admitTogether(admissions: Admission[]): Promise<Outcome[]> {
    try {
      return await this.jobs.transaction((tx) => this.decideAndCreate(tx, admissions));
    } catch (error) {
      if (admissions.length === 1) return [error instanceof Error ? error : new Error(String(error))];
      // The transaction rolled back for all of them: each again on its own, so each gets its own answer.
      // Should the failure have been a lost answer to a COMMIT that did commit, the job ids the retries
      // insert again already exist: each retry then fails whole (its hold rolled back with it).
      return Promise.all(admissions.map(async (admission) => (await this.admitTogether([admission]))[0]));
    }
  }

  private async decideAndCreate(tx: PgTransaction, admissions: Admission[]): Promise<Outcome[]> {
    const locked = await lockAccounts(
      tx,
      admissions.map((admission) => admission.job.accountId),
    );
    const period = billingPeriod();
    const looks = admissions.map(({ caller, job }) => ({
      caller,
      account: locked.get(job.accountId)!,
      look: { region: job.region, estimatedCredits: job.estimatedCredits, estimatedSeconds: job.estimatedSeconds },
    }));
    const usage = await this.limits.usage(tx, period, looks);

    const admittedIn = new Map<string, number>();
    const refusals = looks.map(({ caller, account, look }, n) => {
      const queued = usage[n].queued + (admittedIn.get(look.region) ?? 0);
      const refusal =
        accountStateRefusal(account.subscription_status) ??
        this.limits.firstExceeded(caller, account, look, period, { ...usage[n], queued });
      if (!refusal) admittedIn.set(look.region, (admittedIn.get(look.region) ?? 0) + 1);
      return refusal;
    });
    const admitted = admissions.filter((_, n) => refusals[n] === null);
    if (!admitted.length) return refusals as Error[];

    const held = await authoriseHolds(
      tx,
      admitted.map(({ job }) => ({ accountId: job.accountId, jobId: job.id, credits: job.estimatedCredits })),
    );
    // The balance was checked on the locked row (limits.checkBalance): the CHECK constraint's backstop.
    const notHeld = admitted.find(({ job }) => !held.has(job.id));
    if (notHeld) throw new Error(`the hold of ${notHeld.job.id} was refused although its account's row covered it`);

    const created = await this.jobs.insert(
      tx,
      admitted.map(({ job }) => job),
    );
    const links = { baseUrl: this.config.publicBaseUrl, secret: this.config.assetUrlSecret };
    const views = created.map((found) => toJobView(found.job, found.items, links));
    await storeIdempotentResponses(
      tx,
      admitted.flatMap(({ job, idempotency }, k) =>
        idempotency
          ? [
              {
                claim: idempotency,
                response: { status: 202, body: views[k], headers: { location: jobLocation(job.api, job.id) } },
              },
            ]
          : [],
      ),
    );
    tx.afterCommit(() => admitted.forEach(({ job }) => jobSubmitted(job.api)));
    let next = 0;
    return refusals.map((refusal) => refusal ?? views[next++]);
  }
}
