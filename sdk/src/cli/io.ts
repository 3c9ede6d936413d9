// Where the CLI writes: results to stdout (a table on a terminal, the API's JSON with --json or when
// piped, as the stripe and gh CLIs do), progress and errors to stderr.

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM: long-running commands (`listen`) stop cleanly. */
  signal?: AbortSignal;
}

/** Prints `value` as JSON when asked or piped, else what `human` renders of it. */
export function printResult<T>(io: CliIo, values: { json?: boolean }, value: T, human: (value: T) => string): void {
  io.stdout.write(values.json || io.stdout.isTTY !== true ? `${JSON.stringify(value, null, 2)}\n` : human(value));
}
