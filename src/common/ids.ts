// Identifiers: a type prefix and a sortable random part (docs/api-decisions.md, conventions), e.g. job_01JD…
import { randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export type IdPrefix =
  | 'job'
  | 'acct'
  | 'key'
  | 'upl'
  | 'ast'
  | 'we'
  | 'evt'
  | 'lic'
  | 'act'
  | 'req'
  | 'led'
  | 'hold'
  | 'dlv'
  | 'mem'
  | 'ses'
  | 'wkr';

/**
 * Random bytes are drawn from a pool refilled 4 KiB at a time (as Node does for randomUUID): a
 * randomBytes call per id measured as several µs of each request's CPU time (its request id).
 */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++];
}

/** Uniform random base62 string (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

function timePart(epochMs: number): string {
  let ms = epochMs;
  let time = '';
  for (let i = 0; i < 9; i++) {
    time = BASE62[ms % 62] + time;
    ms = Math.floor(ms / 62);
  }
  return time;
}

/** 9 base62 chars of milliseconds (sortable for millennia) followed by 14 random chars (83 bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${timePart(Date.now())}${randomBase62(14)}`;
}

/** Sorts before every id of `prefix` made at or after `epochMs` (and after every earlier one): `id > idFloor(…)`. */
export function idFloor(prefix: IdPrefix, epochMs: number): string {
  return `${prefix}_${timePart(epochMs)}`;
}
