// Where a worker keeps a job's files while it runs (downloads, ffmpeg's output before storage), and
// the clean-up of what a killed worker left there.
import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, rmdir } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'mediajobs-worker-';

/** A process's start time (clock ticks after boot, field 22 of /proc/<pid>/stat): with its pid, an identity that survives pid reuse. */
function startTime(pid: number): { state: 'running'; start: string } | { state: 'gone' | 'unknown' } {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    return { state: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : 'unknown' };
  }
  // The fields after the command name (in parentheses, may hold spaces and parentheses): state first.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[0] === 'Z' ? { state: 'gone' } : { state: 'running', start: fields[19] };
}

/** True only when that process is certainly gone (or its pid now belongs to a younger process). */
function isGone(pid: number, start: string): boolean {
  const now = startTime(pid);
  return now.state === 'gone' || (now.state === 'running' && now.start !== start);
}

function ownIdentity(): string {
  const own = startTime(process.pid);
  return `${process.pid}-${own.state === 'running' ? own.start : '0'}`;
}

/**
 * Each worker process keeps its jobs' folders under `$TMPDIR/mediajobs-worker-<host>-<pid>-<start>`. A
 * SIGKILLed worker removes nothing, so a starting worker removes the folders of this host's workers
 * that are gone (their ffmpeg died with them: see run-ffmpeg.ts). Folders of other hosts (a shared
 * TMPDIR) are never touched: their processes cannot be seen from here.
 */
@Injectable()
export class WorkDirs implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(WorkDirs.name);
  private readonly host = hostname().replace(/[^A-Za-z0-9.]/g, '_');
  private readonly root = join(tmpdir(), `${PREFIX}${this.host}-${ownIdentity()}`);

  async onModuleInit(): Promise<void> {
    await this.removeLeftovers();
    await mkdir(this.root, { recursive: true });
  }

  async onApplicationShutdown(): Promise<void> {
    // Each job removes its own folder; what is left is the empty root (another worker in this process
    // may still use it: then it is not empty and stays for the next sweep).
    await rmdir(this.root).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOTEMPTY' && error.code !== 'ENOENT')
        this.logger.warn({ err: error }, 'could not remove the work folder');
    });
  }

  /** A fresh folder for one run; its name starts with `name` (a job id: operators and tests find it). */
  create(name: string): Promise<string> {
    return mkdtemp(join(this.root, `mediajobs-${name}-`));
  }

  /** A run's folder and everything in it: gone once the run is over. */
  remove(dir: string): Promise<void> {
    return rm(dir, { recursive: true, force: true });
  }

  /** Runs `work` in a fresh folder (see create) that is removed afterwards, also when it throws. */
  async using<T>(name: string, work: (dir: string) => Promise<T>): Promise<T> {
    const dir = await this.create(name);
    try {
      return await work(dir);
    } finally {
      await this.remove(dir);
    }
  }

  private async removeLeftovers(): Promise<void> {
    const mine = `${PREFIX}${this.host}-`;
    for (const name of await readdir(tmpdir())) {
      const match = /^(\d+)-(\d+)$/.exec(name.startsWith(mine) ? name.slice(mine.length) : '');
      if (!match || !isGone(Number(match[1]), match[2])) continue;
      await rm(join(tmpdir(), name), { recursive: true, force: true });
      this.logger.log({ folder: name }, 'removed the work folder of a worker that is gone');
    }
  }
}
