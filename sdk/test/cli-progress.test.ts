// The convert command's job progress (issue 27 item 11): the line names the phase — encoding, joining,
// storing — and on a terminal the bar moves smoothly between the once-a-second polls instead of
// jumping, and shows how long a join or a store has taken instead of sitting on a frozen percentage.
// Driven by a fake clock; the output is a snapshot (UPDATE_SNAPSHOTS=1 npm test to update, and read
// the diff).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { jobPhase, progressReporter, type ProgressClock } from '../src/cli/progress.js';
import type { JobView } from '../src/types.js';
import { jobView } from './fault-server.js';

const SNAPSHOTS = resolve(__dirname, '..', '..', 'test', 'snapshots');

function expectSnapshot(name: string, actual: string): void {
  const file = resolve(SNAPSHOTS, `${name}.txt`);
  if (process.env.UPDATE_SNAPSHOTS === '1') writeFileSync(file, actual);
  assert.ok(existsSync(file), `no snapshot ${name}.txt: run with UPDATE_SNAPSHOTS=1`);
  assert.equal(actual, readFileSync(file, 'utf8'));
}

/** A clock the test moves; the redraw timer fires as time passes. */
class FakeClock implements ProgressClock {
  time = 0;
  private timers: { every: number; next: number; tick: () => void }[] = [];
  now(): number {
    return this.time;
  }
  every(ms: number, tick: () => void): () => void {
    const timer = { every: ms, next: this.time + ms, tick };
    this.timers.push(timer);
    return () => (this.timers = this.timers.filter((other) => other !== timer));
  }
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      const due = this.timers.filter((timer) => timer.next <= until).sort((a, b) => a.next - b.next)[0];
      if (!due) break;
      this.time = due.next;
      due.next += due.every;
      due.tick();
    }
    this.time = until;
  }
}

class Capture extends Writable {
  text = '';
  constructor(readonly isTTY: boolean) {
    super();
  }
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

const view = (status: string, progress: number, phase: string | null = null): JobView =>
  jobView({
    status,
    progress,
    items: [{ index: 0, status: status === 'processing' ? 'processing' : status, phase }],
  }) as unknown as JobView;

/** A segmented item as the API reports it, one poll a second: queued, encoding, joining, storing, done. */
const POLLS: JobView[] = [
  view('queued', 0),
  view('processing', 0.05, 'encoding'),
  view('processing', 0.25, 'encoding'),
  view('processing', 0.45, 'encoding'),
  view('processing', 0.65, 'encoding'),
  view('processing', 0.85, 'encoding'),
  view('processing', 0.999, 'joining'),
  view('processing', 0.999, 'joining'),
  view('processing', 0.999, 'storing'),
  view('succeeded', 1),
];

function follow(isTTY: boolean): { text: string; clock: FakeClock } {
  const clock = new FakeClock();
  const out = new Capture(isTTY);
  const progress = progressReporter(out, clock);
  for (const poll of POLLS) {
    progress.update(poll);
    clock.advance(1000);
  }
  progress.finish();
  return { text: out.text, clock };
}

describe('convert progress', () => {
  test('a log or pipe gets one line per phase or 10 % step, naming the phase', () => {
    const { text } = follow(false);
    assert.doesNotMatch(text, /\r/);
    assert.match(text, /^encoding +\[/m);
    assert.match(text, /^joining +\[/m);
    assert.match(text, /^storing +\[/m);
    expectSnapshot('convert-progress-log', text);
  });

  test('a terminal redraws between polls: the bar moves in small steps and never back', () => {
    const { text } = follow(true);
    const frames = text.split('\r\x1b[2K').filter(Boolean);
    const percents = frames
      .filter((frame) => frame.startsWith('encoding'))
      .map((frame) => Number(/(\d+)%/.exec(frame)![1]));
    // Four frames a second between polls that are 20 % apart.
    assert.ok(percents.length >= 16, `only ${percents.length} encoding frames`);
    for (let i = 1; i < percents.length; i++) {
      assert.ok(percents[i]! >= percents[i - 1]!, `went back: ${percents.join(' ')}`);
      assert.ok(percents[i]! - percents[i - 1]! <= 6, `jumped: ${percents.join(' ')}`);
    }
    // While joining and storing the percentage stands still; the time spent in the phase counts up.
    const joining = frames.filter((frame) => frame.startsWith('joining'));
    assert.ok(joining.length >= 8);
    assert.match(joining[0]!, / 0:00$/);
    assert.match(joining[joining.length - 1]!, /99% 0:0[12]$/);
    assert.match(frames[frames.length - 1]!, /^succeeded +\[#{30}\] 100% ETA --:--\n$/);
    expectSnapshot('convert-progress-terminal', frames.join('\n'));
  });

  test('the phase is the first processing item’s, or the status', () => {
    assert.equal(jobPhase(view('queued', 0)), 'queued');
    assert.equal(jobPhase(view('processing', 0.5, 'storing')), 'storing');
    // An API that does not send a phase yet: the status.
    assert.equal(jobPhase(view('processing', 0.5)), 'processing');
    assert.equal(jobPhase(view('succeeded', 1, 'storing')), 'succeeded');
  });
});
