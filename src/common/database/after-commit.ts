// Work to do once a transaction has committed (e.g. counting the credits it moved): a counter bumped
// inside a transaction that then rolls back would count money that never moved.
import type { EntityManager, EntitySubscriberInterface, QueryRunner } from 'typeorm';
import { EventSubscriber, type TransactionCommitEvent, type TransactionRollbackEvent } from 'typeorm';
import { PgTransaction } from './pg-transaction';

const pending = new WeakMap<QueryRunner, (() => void)[]>();

/** Runs `work` after `manager`'s transaction commits (dropped if it rolls back); at once outside a transaction. */
export function afterCommit(manager: EntityManager | PgTransaction, work: () => void): void {
  if (manager instanceof PgTransaction) return manager.afterCommit(work);
  const runner = manager.queryRunner;
  if (!runner?.isTransactionActive) return work();
  const list = pending.get(runner) ?? [];
  list.push(work);
  pending.set(runner, list);
}

/** Registered on the DataSource (DatabaseModule): runs a transaction's after-commit work when it ends. */
@EventSubscriber()
export class AfterCommitSubscriber implements EntitySubscriberInterface {
  afterTransactionCommit(event: TransactionCommitEvent): void {
    // A savepoint's release leaves the outer transaction open: its work waits for the real commit.
    if (event.queryRunner.isTransactionActive) return;
    const list = pending.get(event.queryRunner);
    pending.delete(event.queryRunner);
    for (const work of list ?? []) work();
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) pending.delete(event.queryRunner);
  }
}
