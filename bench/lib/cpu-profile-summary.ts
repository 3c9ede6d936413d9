// Where a profiled server's CPU time goes: `node dist-bench/bench/lib/cpu-profile-summary.js <file>
// [µs per request]` prints the busy (non-idle) time by category — each sample goes to the innermost
// frame on its stack that names one (a socket write made by pg counts as pg's) — and by function
// (self time), so a change can be argued from where the time goes. With the CPU µs per request the
// bench measured, each category is also shown as µs per request.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Specific categories first: a sample goes to the innermost frame matching one of them. */
const SPECIFIC: [string, RegExp][] = [
  ['redis client (ioredis)', /ioredis|redis-parser|denque/],
  ['pg client', /node_modules\/(pg|pg-pool|pg-protocol|pg-types|postgres-[a-z]+)\//],
  ['typeorm', /node_modules\/typeorm\//],
  ['request log (pino)', /pino|sonic-boom|@pinojs|src\/common\/logger/],
  ['metrics', /prom-client|http-metrics/],
  ['request id', /src\/common\/ids|req-id-gen/],
  ['failed-credential budget', /credential-attempts/],
  ['rate limiter', /rate-limiter/],
  ['auth (key cache)', /auth\.service|api-key\.js/],
  ['access checks', /access\.guard|route-access|session-authenticator|maintenance/],
  ['idempotency interceptor', /idempotency/],
  ['validation pipe', /validation|class-validator|class-transformer/],
  ['job read (controller, service, repository, view)', /src\/jobs\//],
  ['HTTP response write (node http, socket)', /node:_http_outgoing/],
  ['response serialisation (fastify reply)', /fastify\/lib\/reply|fast-json-stringify/],
  ['Nest pipeline (router, guards, interceptors, pipes, rxjs)', /@nestjs|rxjs|reflect-metadata/],
  ['Fastify routing and hooks', /fastify|find-my-way|middie/],
  ['other of ours', /\/dist\/src\//],
];
/** Generic categories, used only when no specific one is on the stack. */
const GENERIC: [string, RegExp][] = [
  ['node http parsing', /node:_http/],
  ['sockets, streams', /node:net|stream_base_commons|streams\//],
];

function categorise(stack: ProfileNode[]): string {
  const leaf = stack[0].callFrame.functionName;
  if (leaf === '(garbage collector)' || leaf === '(program)') return leaf;
  for (const rules of [SPECIFIC, GENERIC]) {
    for (const node of stack) {
      const rule = rules.find(([, pattern]) => pattern.test(node.callFrame.url));
      if (rule) return rule[0];
    }
  }
  return `other: ${leaf || '(anonymous)'}`;
}

function print(title: string, entries: Map<string, number>, busy: number, perRequest: number, top: number): void {
  process.stdout.write(`\n${title}\n`);
  for (const [name, micros] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const share = micros / busy;
    const us = perRequest ? `${Math.round(share * perRequest)} µs`.padStart(8) : '';
    process.stdout.write(`${(share * 100).toFixed(1).padStart(5)}% ${us}  ${name}\n`);
  }
}

function main(): void {
  const [file, perRequestArg] = process.argv.slice(2);
  const perRequest = Number(perRequestArg ?? 0);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<number, number>();
  profile.samples.forEach((id, index) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));

  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  for (const [id, micros] of self) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') continue;
    busy += micros;
    const stack: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!);
    const category = categorise(stack);
    byCategory.set(category, (byCategory.get(category) ?? 0) + micros);
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, '');
    const name = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  }
  process.stdout.write(`busy (not idle): ${(busy / 1000).toFixed(0)} ms sampled\n`);
  print('by category', byCategory, busy, perRequest, 30);
  print('by function (self time)', byFunction, busy, perRequest, 30);
}

main();
