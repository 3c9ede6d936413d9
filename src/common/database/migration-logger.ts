// What `npm run migration:run` prints: one line per migration applied (or "no migrations are pending"),
// and errors — not the SQL. TypeORM's CLI turns query logging on for every run; this logger is where
// those lines end, so they are dropped here.
import type { Logger } from 'typeorm';

export class MigrationLogger implements Logger {
  constructor(private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`)) {}

  logQuery(): void {}

  logQuerySlow(): void {}

  logQueryError(error: string | Error, query: string): void {
    const message = typeof error === 'string' ? error : error.message;
    this.write(`migration error: ${message} (in: ${query.replace(/\s+/g, ' ').trim().slice(0, 200)})`);
  }

  logSchemaBuild(message: string): void {
    const applied = /^Migration (\S+) has been (\(fake\) )?executed successfully\.$/.exec(message);
    if (applied) return this.write(`migration ${applied[1]} applied${applied[2] ? ' (fake)' : ''}`);
    const reverted = /^Migration (\S+) has been (\(fake\) )?reverted successfully\.$/.exec(message);
    if (reverted) return this.write(`migration ${reverted[1]} reverted${reverted[2] ? ' (fake)' : ''}`);
    if (/^No migrations (are pending|were found)/.test(message)) this.write(message);
  }

  logMigration(message: string): void {
    this.write(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.write(`warning: ${String(message)}`);
  }
}
