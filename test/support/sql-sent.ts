// The SQL every `pg` client of this process sends while some work runs — the API under test included, as
// it runs in the test's process. Counted on the driver itself, so a test sees each statement with its
// parameters exactly as PostgreSQL is asked to run it.
import { Client } from 'pg';

export interface SentStatement {
  text: string;
  values: unknown[];
}

/** Runs `work` and returns its result with every statement sent meanwhile, in order. */
export async function sqlSentDuring<T>(work: () => Promise<T>): Promise<{ result: T; statements: SentStatement[] }> {
  const statements: SentStatement[] = [];
  const query = Client.prototype.query;
  const spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string; values?: unknown };
    const text = typeof config === 'string' ? config : config.text;
    const values = typeof config === 'string' ? args[1] : config.values;
    if (text) statements.push({ text, values: Array.isArray(values) ? values : [] });
    return (query as (...a: unknown[]) => unknown).apply(this, args) as never;
  });
  try {
    return { result: await work(), statements };
  } finally {
    spy.mockRestore();
  }
}
