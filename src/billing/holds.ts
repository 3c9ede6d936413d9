// The holds' free functions, as the API's submit (src/jobs/job-admission.ts, jobs.service.ts) calls them
// until it moves onto HoldsRepository with its use cases (issue 39, item 3): each delegates to the one
// repository, where the SQL and the rules are (src/billing/holds.repository.ts). New code injects
// HoldsRepository (HoldsModule) instead.
import type { EntityManager } from 'typeorm';
import type { Transaction } from '../common/database/pg-transaction';
import { HoldsRepository, type HoldSettlement, type LockedAccount, type NewHold } from './holds.repository';

export {
  availableCredits,
  HoldsRepository,
  type HoldSettlement,
  type LockedAccount,
  type NewHold,
} from './holds.repository';

const holds = new HoldsRepository();

/** @deprecated inject HoldsRepository: `lockAccounts`. */
export function lockAccounts(
  manager: Transaction,
  accountIds: string[],
  lock: 'wait' | 'skip locked' = 'wait',
): Promise<Map<string, LockedAccount>> {
  return holds.lockAccounts(manager, accountIds, lock);
}

/** @deprecated inject HoldsRepository: `readAccount`. */
export function readAccount(manager: Transaction, accountId: string): Promise<LockedAccount> {
  return holds.readAccount(manager, accountId);
}

/** @deprecated inject HoldsRepository: `authorise`. */
export function authoriseHolds(manager: Transaction, wanted: NewHold[]): Promise<Set<string>> {
  return holds.authorise(manager, wanted);
}

/** @deprecated inject HoldsRepository: `settle`. */
export function settleHold(manager: EntityManager, hold: HoldSettlement): Promise<void> {
  return holds.settle(manager, hold);
}
