// `npm run lint` rejects an import that points the wrong way (eslint.config.mjs, DEPENDENCY_ZONES): each
// deliberate wrong-way import below, linted with the repository's own config as a file of the module
// it names, fails with the rule's message; the right-way ones pass.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/**
 * Lints files of one import line each (its names used), as if each were at its `filePath`, with the
 * repository's own eslint.config.mjs; only type information is off, because these files exist only as
 * text. ESLint loads its config with a dynamic import, which Jest's VM cannot: so in a child process.
 */
function lint(files: [filePath: string, importLine: string][]): string[][] {
  const sources = files.map(([filePath, importLine]) => {
    const names = /\{ (?:type )?([^}]+) \}/.exec(importLine)![1].split(', ');
    return { filePath, source: `${importLine}\nexport const used: unknown[] = [${names.join(', ')}];\n` };
  });
  const script = `
    import { ESLint } from 'eslint';
    import tseslint from 'typescript-eslint';
    const eslint = new ESLint({
      overrideConfig: [
        { languageOptions: { parserOptions: { projectService: false, project: null } } },
        tseslint.configs.disableTypeChecked,
      ],
    });
    const out = [];
    for (const { filePath, source } of JSON.parse(process.argv[1])) {
      const [result] = await eslint.lintText(source, { filePath });
      out.push(result.messages.map((m) => m.ruleId + ': ' + m.message));
    }
    console.log(JSON.stringify(out));
  `;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(sources)], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout) as string[][];
}

const WRONG_WAY: [filePath: string, importLine: string, reason: string][] = [
  ['src/billing/wrong-way.ts', "import { JobsService } from '../jobs/jobs.service';", 'billing is a leaf'],
  ['src/webhooks/wrong-way.ts', "import type { JobRow } from '../jobs/job.types';", 'webhooks is a leaf'],
  [
    'src/jobs/dto/wrong-way.ts',
    "import { MediaWorker } from '../../processing/media-worker';",
    'jobs imports billing and webhooks',
  ],
  [
    'src/admin/wrong-way.ts',
    "import { ProcessingModule } from '../processing/processing.module';",
    'only the worker module',
  ],
  ['src/app.module.ts', "import { ProcessingModule } from './processing/processing.module';", 'only the worker module'],
  [
    'src/account/wrong-way.ts',
    "import { convertSdrToHdr } from '../media/pipelines';",
    'only processing and jobs import src/media',
  ],
  [
    'src/jobs/wrong-way.ts',
    "import { buildSdrToHdrArgs } from '../media/hdr-args';",
    'the API process never loads ffmpeg argv builders or pipelines',
  ],
  ['src/media/wrong-way.ts', "import { JobApi } from '../jobs/job.types';", 'media is a leaf'],
  [
    'src/processing/wrong-way.ts',
    "import { AdminService } from '../admin/admin.service';",
    'processing imports jobs, billing',
  ],
  [
    'src/common/wrong-way.ts',
    "import { HoldsRepository } from '../billing/holds.repository';",
    'src/common imports nothing',
  ],
  ['src/webhooks/wrong-way.ts', "import { setupDocs } from '../docs/setup-docs';", 'only the app'],
];

const RIGHT_WAY: [filePath: string, importLine: string][] = [
  ['src/jobs/right-way.ts', "import { HoldsRepository } from '../billing/holds.repository';"],
  ['src/webhooks/right-way.ts', "import { ApiSuccess } from '../common/openapi/api-success';"],
  ['src/jobs/right-way.ts', "import { OutboxWriter } from '../webhooks/outbox.writer';"],
  ['src/processing/right-way.ts', "import { JobLifecycle } from '../jobs/job-lifecycle';"],
  ['src/worker.module.ts', "import { ProcessingModule } from './processing/processing.module';"],
  ['src/jobs/right-way.ts', "import { probeMedia } from '../media/probe';"],
  ['src/jobs/right-way.ts', "import { outputSize } from '../media/output-geometry';"],
  ['src/processing/right-way.ts', "import { buildSdrToHdrArgs } from '../media/hdr-args';"],
];

describe('dependency directions in npm run lint', () => {
  const wrong = lint(WRONG_WAY.map(([filePath, importLine]) => [filePath, importLine]));
  const right = lint(RIGHT_WAY);

  it.each(WRONG_WAY.map((row, i) => [...row, i] as const))(
    'refuses %s importing the wrong way: %s',
    (_file, _line, reason, i) => {
      expect(wrong[i]).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            new RegExp(`^import/no-restricted-paths: Unexpected path .* imported in restricted zone\\. ${reason}`),
          ),
        ]),
      );
    },
  );

  it.each(RIGHT_WAY.map((row, i) => [...row, i] as const))('lets %s import the right way: %s', (_file, _line, i) => {
    expect(right[i]).toEqual([]);
  });
});
