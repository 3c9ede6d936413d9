// Identifiers: a type prefix and a sortable random part (API.md conventions), e.g. job_01JD…
import { randomBytes } from 'node:crypto';

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

/** Uniform random base62 string (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** 9 base62 chars of milliseconds (sortable for millennia) followed by 14 random chars (83 bits). */
export function newId(prefix: IdPrefix): string {
  let ms = Date.now();
  let time = '';
  for (let i = 0; i < 9; i++) {
    time = BASE62[ms % 62] + time;
    ms = Math.floor(ms / 62);
  }
  return `${prefix}_${time}${randomBase62(14)}`;
}
