// The operator command line's commands (`npm run admin -- <command>`): parsed from argv and run with
// the same AdminService and LicenseAdminService as /v1/admin/*. Its entry point is src/admin-cli.ts.
import { parseArgs } from 'node:util';
import type { LicenseAdminService } from '../license/license-admin.service';
import type { AdminService } from './admin.service';
import { ACCOUNT_STATUSES, PLAN_IDS, SUBSCRIPTION_STATUSES } from './account-values';

/** Each command's usage lines, by its name (`<command> --help` prints its own). */
const COMMANDS: Record<string, string> = {
  'create-account': `  create-account --name <name> [--plan free|starter|pro|enterprise] [--owner-email <email>] [--credits <n>]
                                  prints the account and its first API key, and with --owner-email
                                  owner_invite_url: the owner's one-time link to the dashboard (24 h)`,
  'password-link': `  password-link <email>           prints a member's one-time set-password link (24 h)`,
  'list-accounts': `  list-accounts`,
  'show-account': `  show-account <account_id>`,
  'grant-credits': `  grant-credits <account_id> --credits <n> [--reason <text>]`,
  'set-plan': `  set-plan <account_id> <plan>`,
  suspend: `  suspend <account_id>            unsuspend <account_id>`,
  'set-subscription': `  set-subscription <account_id> active|payment_failed|inactive`,
  'set-spend-limit': `  set-spend-limit <account_id> <usd|none>`,
  maintenance: `  maintenance on [--until <ISO time>] | off`,
  'block-content': `  block-content <sha256> [--reason <text>]        unblock-content <sha256>`,
  'create-license': `  create-license <account_id> --max-devices <n> --expires-at <ISO time> [--grace-seconds <n>] [--plan <name>]
                                  prints the licence and its mjl_ key (shown once)`,
  'revoke-license': `  revoke-license <license_id>`,
  'rebuild-usage-days': `  rebuild-usage-days [<account_id>]
                                  sums the per-day usage (balance, chart, quota, spend cap) again from
                                  the ledger and the jobs: after an upgrade, once the old version stopped`,
  'recount-open-jobs': `  recount-open-jobs [<account_id>]
                                  counts each account's open jobs (concurrency limit, running_jobs) again
                                  from the jobs: after an upgrade, once the old version stopped`,
  'audit-money': `  audit-money [<account_id>]      checks the money invariants in the database (balance = grants −
                                  captures, reserved = open holds, open_jobs, one authorise and one
                                  settlement per job, charge = sum of items); prints each account or job
                                  that breaks one and exits 1, or exits 0 when the money is exact`,
};
/** Commands whose usage line is another's (the pairs written on one line). */
const USAGE_OF: Record<string, string> = { unsuspend: 'suspend', 'unblock-content': 'block-content' };

const HEADER = "Usage: npm run admin -- <command> [options]      (<command> --help: that command's usage)\n\n";

export const USAGE = `${HEADER}${Object.values(COMMANDS).join('\n')}\n`;

/**
 * The usage to print when `argv` asks for help (`--help` or `-h` anywhere, exit 0): the command's own,
 * or the whole one (no command, or one it does not know); null when it does not ask. Asked for help,
 * the usage is the answer even if the rest of the line would not parse.
 */
export function helpFor(argv: string[]): string | null {
  if (!argv.some((arg) => arg === '--help' || arg === '-h')) return null;
  const command = argv.find((arg) => !arg.startsWith('-'));
  const lines = command ? COMMANDS[USAGE_OF[command] ?? command] : undefined;
  return lines ? `Usage: npm run admin -- ${lines.trimStart()}\n` : USAGE;
}

/** A command line that does not say what to do: exit 2 with the usage text. */
export class UsageError extends Error {}

/** A command that ran and found something wrong (audit-money): its result is printed, and the exit is 1. */
export class CommandFailed extends Error {
  constructor(readonly result: unknown) {
    super('the command found problems');
  }
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], what: string): T {
  if (!value || !allowed.includes(value as T)) throw new UsageError(`${what} must be one of ${allowed.join(', ')}`);
  return value as T;
}

function required(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

function optionalEmail(value: string | undefined, what: string): string | undefined {
  if (value !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value))
    throw new UsageError(`${what} must be an email address`);
  return value;
}

function positiveInt(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(parsed) || parsed < 1)
    throw new UsageError(`${what} must be a whole number ≥ 1`);
  return parsed;
}

function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        // No default here: create-account defaults to 'free', create-license to its own plan name.
        plan: { type: 'string' },
        credits: { type: 'string' },
        reason: { type: 'string' },
        'owner-email': { type: 'string' },
        until: { type: 'string' },
        'max-devices': { type: 'string' },
        'expires-at': { type: 'string' },
        'grace-seconds': { type: 'string' },
      },
    });
  } catch (error) {
    // An unknown option or a missing option value is a usage error (exit 2), not a failure.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) throw new UsageError((error as Error).message);
    throw error;
  }
}

/** What a dry run of a command throws at its first use of a service (see usageErrorIn). */
const SERVICE_NEEDED = Symbol('service needed');
/** Services whose every method throws SERVICE_NEEDED: each command checks its arguments before it calls one. */
const unreached = new Proxy(
  {},
  {
    get: () => () => {
      throw SERVICE_NEEDED;
    },
  },
) as AdminService & LicenseAdminService;

/**
 * The usage error `argv` makes, found without the application: the command is run against services that
 * are never reached, so the CLI answers a mistyped line at once, with no database or Redis to connect to.
 */
export async function usageErrorIn(argv: string[]): Promise<UsageError | undefined> {
  try {
    await runAdminCommand(unreached, unreached, argv);
  } catch (error) {
    if (error instanceof UsageError) return error;
    if (error !== SERVICE_NEEDED) throw error;
  }
  return undefined;
}

/** Runs the command `argv` names; its result is what the CLI prints. */
export async function runAdminCommand(
  admin: AdminService,
  licenses: LicenseAdminService,
  argv: string[],
): Promise<unknown> {
  const { values, positionals } = parseCommandLine(argv);
  const [command, first, second] = positionals;
  switch (command) {
    case 'create-account': {
      const credits = positiveInt(values.credits, '--credits');
      const created = await admin.createAccount(
        required(values.name, '--name'),
        oneOf(values.plan ?? 'free', PLAN_IDS, '--plan'),
        optionalEmail(values['owner-email'], '--owner-email'),
      );
      // A first account ready to run jobs in one command (README quick start).
      if (credits) await admin.grantCredits(created.account.id, credits, 'initial credits');
      return credits ? { ...created, account: await admin.getAccount(created.account.id) } : created;
    }
    case 'password-link':
      return admin.passwordLink(optionalEmail(required(first, '<email>'), '<email>')!);
    case 'list-accounts':
      return admin.listAccounts(100);
    case 'show-account':
      return admin.getAccount(required(first, '<account_id>'));
    case 'grant-credits': {
      const credits = Number(required(values.credits, '--credits'));
      if (!Number.isInteger(credits) || credits < 1) throw new UsageError('--credits must be a whole number ≥ 1');
      return admin.grantCredits(required(first, '<account_id>'), credits, values.reason ?? 'operator grant');
    }
    case 'set-plan':
      return admin.patchAccount(required(first, '<account_id>'), { plan: oneOf(second, PLAN_IDS, '<plan>') });
    case 'suspend':
    case 'unsuspend':
      return admin.patchAccount(required(first, '<account_id>'), {
        status: oneOf(command === 'suspend' ? 'suspended' : 'active', ACCOUNT_STATUSES, 'status'),
      });
    case 'set-subscription':
      return admin.patchAccount(required(first, '<account_id>'), {
        subscription_status: oneOf(second, SUBSCRIPTION_STATUSES, '<status>'),
      });
    case 'set-spend-limit': {
      const raw = required(second, '<usd|none>');
      const limit = raw === 'none' ? null : Number(raw);
      if (limit !== null && !(Number.isFinite(limit) && limit >= 0))
        throw new UsageError('<usd> must be a number ≥ 0 or "none"');
      return admin.patchAccount(required(first, '<account_id>'), { spend_limit_usd: limit });
    }
    case 'maintenance':
      if (first !== 'on' && first !== 'off') throw new UsageError('maintenance takes on or off');
      return admin.setMaintenance(first === 'on', values.until);
    case 'block-content':
      return admin.blockContent(required(first, '<sha256>'), values.reason);
    case 'unblock-content':
      return admin.unblockContent(required(first, '<sha256>'));
    case 'create-license':
      return licenses.create({
        accountId: required(first, '<account_id>'),
        maxDevices: positiveInt(required(values['max-devices'], '--max-devices'), '--max-devices')!,
        expiresAt: required(values['expires-at'], '--expires-at'),
        offlineGraceSeconds: positiveInt(values['grace-seconds'], '--grace-seconds'),
        plan: values.plan,
      });
    case 'revoke-license':
      return licenses.revoke(required(first, '<license_id>'));
    case 'rebuild-usage-days':
      return admin.rebuildUsageDays(first);
    case 'recount-open-jobs':
      return admin.recountOpenJobs(first);
    case 'audit-money': {
      const audit = await admin.auditMoney(first);
      if (!audit.ok) throw new CommandFailed(audit);
      return audit;
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}
