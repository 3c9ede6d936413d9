// `node dist-bench/bench/growth-seed-cli.js 10k|10m`: seeds (or reuses) one growth database alone.
import { growthDatabase, LARGE, SMALL } from './lib/growth-seed';

const scale = process.argv[2] === '10m' ? LARGE : SMALL;
growthDatabase(scale, (line) => process.stdout.write(`${line}\n`)).then(
  (database) => {
    process.stdout.write(`${JSON.stringify(database)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
