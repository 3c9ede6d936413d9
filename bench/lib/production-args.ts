// The node flags production starts a compiled entry point with, read from its npm script
// (package.json `start:api`: `node <flags> dist/src/main.js`), so a benchmark measures the process
// exactly as `npm run start:api` (and the Docker image, and docker compose) run it.

/** The flags between `node` and `script` in the npm script that runs `script`; none when no script runs it. */
export function productionNodeArgs(scripts: Record<string, string>, script: string): string[] {
  for (const command of Object.values(scripts)) {
    const words = command.trim().split(/\s+/);
    if (words[0] === 'node' && words.at(-1) === script) return words.slice(1, -1);
  }
  return [];
}
