// Reading the command line: options by name, one-line usage errors, values checked against the contract's choices.
import { parseArgs } from 'node:util';
import type { Api } from '../types.js';

/** A mistake in the command line: printed as one line and a hint, exit code 2. */
export class UsageError extends Error {}

/** `--lufs -16` would be refused by parseArgs as an option-like value: join negative numbers to their flag. */
function joinNegativeNumbers(args: string[]): string[] {
  const joined: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] as string;
    const next = args[index + 1];
    if (arg.startsWith('--') && !arg.includes('=') && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      index += 1;
    } else joined.push(arg);
  }
  return joined;
}

type Options = Record<string, { type: 'string' | 'boolean' }>;
/** The values of `T`'s options as given (absent when not), and --json. */
export type Values<T extends Options> = {
  [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string;
} & { json?: boolean };

/** Every command takes --json (print the API's JSON even on a terminal). */
export function parse<const T extends Options>(
  args: string[],
  options: T,
): { values: Values<T>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args: joinNegativeNumbers(args),
      options: { ...options, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
    return { values: values as Values<T>, positionals };
  } catch (error) {
    throw new UsageError(usageMessage(error as Error & { code?: string }));
  }
}

/** parseArgs's messages, said as the rest of the CLI says things (its own hint has unbalanced quotes). */
function usageMessage(error: Error & { code?: string }): string {
  const option = /'(-[^' ]+)/.exec(error.message)?.[1];
  if (!option) return error.message;
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${option}`;
  if (error.message.endsWith('argument missing')) return `${option} needs a value`;
  if (error.message.endsWith('does not take an argument')) return `${option} takes no value`;
  return error.message;
}

export function apiArg(value: string | undefined): Api {
  if (value === 'sdr2hdr' || value === 'audio') return value;
  throw new UsageError(`expected an API name, sdr2hdr or audio, got ${value === undefined ? 'nothing' : `"${value}"`}`);
}

export function numberArg(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number)) throw new UsageError(`--${name} must be a number, got "${value}"`);
  return number;
}

/** `value` if it is one of `choices` (undefined when not given); a usage error naming the choices otherwise. */
export function choiceArg<T extends string>(
  name: string,
  value: string | undefined,
  choices: readonly T[],
): T | undefined {
  if (value === undefined || (choices as readonly string[]).includes(value)) return value as T | undefined;
  throw new UsageError(`--${name} must be ${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}`);
}
