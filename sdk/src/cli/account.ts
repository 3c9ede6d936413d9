// credits, ledger and keys: the account's balance, its credit movements and its API keys.
import type { PagePromise } from '../api-promise.js';
import type { MediaJobs } from '../client.js';
import {
  API_KEY_SCOPES,
  type ApiKey,
  type ApiKeyScope,
  type CreditBalance,
  type LedgerEntry,
  type ListResponse,
} from '../types.js';
import { numberArg, parse, UsageError } from './args.js';
import { formatDate, formatUsd, plural, summary, table } from './format.js';
import { printResult, type CliIo } from './io.js';

/** A list: its first page as the API gives it, or with --all every item of every page. */
export async function printList<T>(
  io: CliIo,
  values: { json?: boolean; all?: boolean },
  list: PagePromise<T>,
  rows: (items: T[]) => string,
): Promise<void> {
  const result: ListResponse<T> | T[] = values.all ? await list.toArray() : await list;
  printResult(io, values, result, (value) => {
    const items = Array.isArray(value) ? value : value.data;
    const more =
      !Array.isArray(value) && value.has_more ? `more: --starting-after ${value.next_cursor} or --all\n` : '';
    return items.length === 0 ? 'none\n' : `${rows(items)}${more}`;
  });
}

export function creditsSummary(balance: CreditBalance): string {
  const quota = balance.quota.processing_minutes_limit;
  return summary([
    ['Available', plural(balance.available_credits, 'credit')],
    ['Balance', plural(balance.balance_credits, 'credit')],
    ['Held by running jobs', plural(balance.reserved_credits, 'credit')],
    ['Plan', balance.plan],
    [
      'Spent this period',
      `${formatUsd(balance.spent_usd)}${balance.spend_limit_usd === null ? '' : ` of ${formatUsd(balance.spend_limit_usd)} limit`}`,
    ],
    [
      'Processing minutes',
      quota === null
        ? `${balance.quota.processing_minutes_used} used`
        : `${balance.quota.processing_minutes_used} of ${quota}`,
    ],
    ['Period resets', formatDate(balance.period_resets_at)],
  ]);
}

export async function credits(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
  const { values } = parse(args, {});
  printResult(io, values, await client.account.credits(), creditsSummary);
  return 0;
}

/**
 * What an entry did to the balance: a grant adds (+), a capture takes (-); a hold and its release
 * move credits in and out of what running jobs hold (the HELD column), not the balance.
 * (The API's `credits` is never negative: the kind gives the direction.)
 */
function movement(entry: LedgerEntry): string {
  const credits = String(entry.credits);
  switch (entry.kind) {
    case 'grant':
      return `+${credits}`;
    case 'capture':
      return `-${credits}`;
    case 'authorise':
      return `hold ${credits}`;
    case 'release':
      return `release ${credits}`;
    default:
      return credits;
  }
}

export function ledgerTable(entries: LedgerEntry[]): string {
  return table(
    ['DATE', 'KIND', 'CREDITS', 'BALANCE', 'HELD', 'JOB', 'REASON'],
    entries.map((entry) => [
      formatDate(entry.created_at),
      entry.kind,
      movement(entry),
      String(entry.balance_after),
      String(entry.reserved_after),
      entry.job_id ?? '',
      entry.reason ?? '',
    ]),
  );
}

export async function ledger(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
  const { values } = parse(args, { limit: { type: 'string' }, all: { type: 'boolean' } });
  await printList(io, values, client.account.ledger({ limit: numberArg('limit', values.limit) }), ledgerTable);
  return 0;
}

export function keysTable(keys: ApiKey[]): string {
  return table(
    ['ID', 'NAME', 'PREFIX', 'SCOPES', 'CREATED', 'LAST USED', 'STATE'],
    keys.map((key) => [
      key.id,
      key.name ?? '—',
      `${key.prefix}…`,
      key.scopes.join(','),
      formatDate(key.created_at),
      formatDate(key.last_used_at),
      key.revoked_at
        ? `revoked ${formatDate(key.revoked_at)}`
        : key.expires_at
          ? `expires ${formatDate(key.expires_at)}`
          : 'active',
    ]),
  );
}

export async function keys(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    scopes: { type: 'string' },
    name: { type: 'string' },
    'expires-at': { type: 'string' },
    limit: { type: 'string' },
    all: { type: 'boolean' },
  });
  const [action, keyId] = positionals;
  if (action === 'list') {
    await printList(io, values, client.apiKeys.list({ limit: numberArg('limit', values.limit) }), keysTable);
  } else if (action === 'create') {
    const scopes = (values.scopes ?? '').split(',').filter(Boolean);
    const unknown = scopes.filter((scope) => !API_KEY_SCOPES.includes(scope as ApiKeyScope));
    if (scopes.length === 0 || unknown.length > 0) {
      throw new UsageError(`--scopes takes a comma-separated list of ${API_KEY_SCOPES.join(', ')}`);
    }
    const created = await client.apiKeys.create({
      scopes: scopes as ApiKeyScope[],
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values['expires-at'] ? { expires_at: values['expires-at'] } : {}),
    });
    printResult(io, values, created, (key) => `${key.key}\n\n${keysTable([key])}`);
    io.stderr.write('the key is shown once: store it now\n');
  } else if (action === 'revoke') {
    if (!keyId) throw new UsageError('keys revoke needs a key id (key_…)');
    printResult(io, values, await client.apiKeys.revoke(keyId), (key) => keysTable([key]));
  } else throw new UsageError('keys needs list, create or revoke');
  return 0;
}
