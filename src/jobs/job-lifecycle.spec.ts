import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { TERMINAL_STATUSES, type JobStatus } from './job.types';
import { JOB_TRANSITIONS, jobStatusesLeadingTo, openItemStatuses, openJobStatuses } from './job-lifecycle';
import { billingStateAtEnd, EVENT_AT_END } from './settlement';

const SRC = join(__dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('job lifecycle', () => {
  it('terminal statuses never change again (docs/api-decisions.md §4)', () => {
    for (const rule of JOB_TRANSITIONS) {
      for (const from of rule.from) expect(TERMINAL_STATUSES as readonly string[]).not.toContain(from);
    }
  });

  it('every ending has a billing state and an event, and is reached from an open status', () => {
    for (const status of TERMINAL_STATUSES) {
      expect(EVENT_AT_END[status]).toBe(`job.${status}`);
      expect(jobStatusesLeadingTo(status).length).toBeGreaterThan(0);
    }
    expect(jobStatusesLeadingTo('queued' as JobStatus)).toEqual([]);
  });

  it('a hold is settled when the ending charges anything (a cancelled job pays for its delivered items), else released', () => {
    expect(billingStateAtEnd('succeeded', 10)).toBe('settled');
    expect(billingStateAtEnd('partially_succeeded', 4)).toBe('settled');
    expect(billingStateAtEnd('failed', 0)).toBe('released');
    expect(billingStateAtEnd('cancelled', 0)).toBe('released');
    expect(billingStateAtEnd('cancelled', 4)).toBe('settled');
  });

  it('is the only writer of a job or item status', () => {
    const writers = sourceFiles(SRC)
      .filter((file) => /UPDATE\s+(jobs|job_items)\s+SET[^`]*\bstatus\s*=/i.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(writers).toEqual(['jobs/job-lifecycle.repository.ts']);
  });

  it('"open" comes from the tables: the statuses with a way out, i.e. every status but the terminal ones', () => {
    expect(openJobStatuses().sort()).toEqual(['processing', 'queued']);
    expect(openItemStatuses().sort()).toEqual(['processing', 'queued']);
    for (const status of openJobStatuses()) expect(TERMINAL_STATUSES as readonly string[]).not.toContain(status);
  });

  it('no query spells out the open statuses: each takes them as a parameter', () => {
    const spelled = sourceFiles(SRC)
      .filter((file) => /status\s+IN\s*\(\s*'queued'\s*,\s*'processing'\s*\)/i.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(spelled).toEqual([]);
  });
});
