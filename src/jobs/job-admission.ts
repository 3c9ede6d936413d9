// Step 8 of a submit and the job itself (docs/api-decisions.md §2): the account's row locked, its state
// checked again, the limits checked, the credits held, the job inserted and, with an Idempotency-Key,
// its 202 stored — in one transaction, shared by the submits that arrive together.
//
// Why together: under load submits reach this step in bursts (one Redis reply or one poll of the
// sockets lets several through at once). At 20 connections, bench/profile-submits counted 3 submits per
// event-loop turn on average, and each paid for its own transaction: seven round trips, each a
// statement that PostgreSQL binds, plans and runs, and a socket write and a wake-up on both sides.
// Together they share the seven statements, each taking every submit's values as arrays. At most
// SHARED_AT_ONCE such transactions run at once; submits that arrive meanwhile wait and go together in
// the next, so under load the transactions grow rather than multiply (bench/submits: 2 at once served
// ~10 % more submits than one per turn, with a lower p99: docs/performance.md).
//
// Each submit is still decided as if it were alone:
// - its account's row is locked before its limits are read, so it sees every hold and job of the
//   account's submits before it;
// - a shared transaction never waits for a lock: it skips an account whose row another transaction
//   holds (SKIP LOCKED). Such a submit, and one whose account has another submit being admitted here
//   already, runs in a transaction of its own, outside the shared ones, which waits for the lock as
//   every submit did before — so one account's contention holds up no other account's submits, and a
//   burst of one account's submits costs what it always did;
// - a refusal (a limit, the account's state) is its submit's answer and changes nothing, so the others
//   go on; each submit's queue-depth check also counts the jobs admitted before it in the transaction;
// - anything else that goes wrong rolls the shared transaction back, and each of its submits then runs
//   in a transaction of its own, so no submit fails for another's sake. Should that failure have been
//   a lost answer to a COMMIT that did commit, the job ids inserted again already exist: each retry
//   then fails whole, its hold rolled back with it.
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { billingPeriod } from '../billing/billing-period';
import { HoldsRepository } from '../billing/holds.repository';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import type { PgTransaction } from '../common/database/pg-transaction';
import { TurnBatch } from '../common/database/turn-batch';
import { storeIdempotentResponses, type IdempotencyClaim } from '../common/idempotency/idempotent-response';
import { jobSubmitted } from '../metrics/job-metrics';
import { accountStateRefusal } from './account-state';
import { jobLocation, toJobView, viewLinks, type JobView } from './job-view';
import { JobsRepository, type NewJob } from './jobs.repository';
import { SubmitLimits } from './limits';

/** A submit that passed steps 1–7: its job as it is to be inserted. */
export interface Admission {
  caller: AuthContext;
  job: NewJob;
  /** The request's claimed Idempotency-Key: its 202 is stored in the job's own transaction. */
  idempotency?: IdempotencyClaim;
}

/** A submit's answer: its job's view, why not (a refusal, or what went wrong), or to run on its own. */
type Outcome = JobView | Error | typeof ON_ITS_OWN;
const ON_ITS_OWN = Symbol('on its own');

/** Shared transactions running at once (above); submits on their own are not counted. */
const SHARED_AT_ONCE = 2;

@Injectable()
export class JobAdmission {
  private readonly logger = new Logger(JobAdmission.name);
  private readonly shared = new TurnBatch<Admission, Outcome>(
    (admissions) => this.admitShared(admissions),
    SHARED_AT_ONCE,
  );

  /** Each account's submits being admitted by this process now. */
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly jobs: JobsRepository,
    private readonly limits: SubmitLimits,
    private readonly holds: HoldsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Admits the job, or throws the submit's refusal. Once this returns, the job, its hold and its stored
   * 202 are committed: nothing after it may fail the request (a 503 would tell the client to retry a
   * job that exists and holds credits).
   */
  async admit(admission: Admission): Promise<JobView> {
    const account = admission.job.accountId;
    const before = this.inFlight.get(account) ?? 0;
    this.inFlight.set(account, before + 1);
    try {
      // With a submit of its account already in flight here, a shared transaction would only find the
      // row locked: this one waits for the lock in a transaction of its own, as every submit did before.
      const outcome = before ? ON_ITS_OWN : await this.shared.load(admission);
      if (outcome === ON_ITS_OWN) return await this.admitAlone(admission);
      if (outcome instanceof Error) throw outcome;
      return outcome;
    } finally {
      const left = this.inFlight.get(account)! - 1;
      if (left) this.inFlight.set(account, left);
      else this.inFlight.delete(account);
    }
  }

  /**
   * The submits of one batch in a shared transaction. An account is in a batch once at most: `admit`
   * sends an account's further submits on their own while one is in flight (HoldsRepository.authorise refuses a
   * second hold of an account, which would roll the batch back to transactions of their own).
   */
  private async admitShared(admissions: Admission[]): Promise<Outcome[]> {
    try {
      return await this.jobs.transaction((tx) => this.decideAndCreate(tx, admissions, 'skip locked'));
    } catch (error) {
      // Rolled back for all of them; each again on its own, where what went wrong is its own answer (an
      // error that is no one submit's, a database outage, is thrown again there and answered to each).
      // Logged at debug only: each submit's own answer says what went wrong to whom it concerns.
      this.logger.debug({ err: error, submits: admissions.length }, 'a shared submit batch rolled back');
      return admissions.map(() => ON_ITS_OWN);
    }
  }

  /** One submit in a transaction of its own, waiting for its account's lock. */
  private async admitAlone(admission: Admission): Promise<JobView> {
    const [outcome] = await this.jobs.transaction((tx) => this.decideAndCreate(tx, [admission], 'wait'));
    if (outcome instanceof Error) throw outcome;
    if (outcome === ON_ITS_OWN) throw new Error('a submit on its own was sent on its own again');
    return outcome;
  }

  private async decideAndCreate(
    tx: PgTransaction,
    batch: Admission[],
    lock: 'wait' | 'skip locked',
  ): Promise<Outcome[]> {
    const locked = await this.holds.lockAccounts(
      tx,
      batch.map((admission) => admission.job.accountId),
      lock,
    );
    // A shared transaction leaves the accounts it could not lock to transactions of their own.
    const admissions = batch.filter(({ job }) => locked.has(job.accountId));
    if (!admissions.length) return batch.map(() => ON_ITS_OWN);
    const period = billingPeriod();
    const looks = admissions.map(({ caller, job }) => ({
      caller,
      account: locked.get(job.accountId)!,
      look: { region: job.region, estimatedCredits: job.estimatedCredits, estimatedSeconds: job.estimatedSeconds },
    }));
    const usage = await this.limits.usage(tx, period, looks);

    // Refusals first, in the batch's order: each submit's queue depth also counts the jobs admitted before it.
    const answers = new Map<Admission, Outcome>();
    const admittedIn = new Map<string, number>();
    looks.forEach(({ caller, account, look }, n) => {
      const queued = usage[n].queued + (admittedIn.get(look.region) ?? 0);
      const refusal =
        accountStateRefusal(account.subscription_status) ??
        this.limits.firstExceeded(caller, account, look, period, { ...usage[n], queued });
      if (refusal) answers.set(admissions[n], refusal);
      else admittedIn.set(look.region, (admittedIn.get(look.region) ?? 0) + 1);
    });
    const admitted = admissions.filter((admission) => !answers.has(admission));
    if (admitted.length) {
      const views = await this.create(tx, admitted);
      admitted.forEach((admission, k) => answers.set(admission, views[k]));
    }
    return batch.map((admission) => answers.get(admission) ?? ON_ITS_OWN);
  }

  /** The holds, the jobs and their stored 202s of the submits admitted: each one statement for all. */
  private async create(tx: PgTransaction, admitted: Admission[]): Promise<JobView[]> {
    const held = await this.holds.authorise(
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
    const views = created.map((found) => toJobView(found.job, found.items, viewLinks(this.config)));
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
    return views;
  }
}
