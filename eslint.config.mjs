// Lint rules (docs/development.md): promises are awaited or handled, switches are exhaustive, === only,
// and imports point the way docs/architecture.md says ("Dependencies"): an arrow the wrong way fails lint.
import importPlugin from 'eslint-plugin-import';
import tseslint from 'typescript-eslint';

/** Globs of every file under src/ but those in the given folders or top-level files (zone targets). */
const srcExcept = (...names) => [`./src/!(${names.join('|')})/**/*`, `./src/!(${names.join('|')})`];

const why = (rule) => `${rule} (docs/architecture.md, "Dependencies").`;

/** import/no-restricted-paths zones: `target` files may not import from `from`. */
const DEPENDENCY_ZONES = [
  {
    target: './src/billing',
    from: './src',
    except: ['./billing', './common', './metrics'],
    message: why('billing is a leaf: it imports only src/common and src/metrics'),
  },
  {
    target: './src/webhooks',
    from: './src',
    except: ['./webhooks', './common', './queues', './metrics', './auth'],
    message: why('webhooks is a leaf: no feature module (jobs, billing, processing, …) is imported by it'),
  },
  {
    target: './src/jobs',
    from: ['./src/processing', './src/account', './src/admin', './src/members', './src/license'],
    message: why('jobs imports billing and webhooks, never processing or the account-side modules'),
  },
  {
    target: './src/processing',
    from: ['./src/account', './src/admin', './src/members', './src/license', './src/auth', './src/docs'],
    message: why('processing imports jobs, billing, webhooks and media, nothing of the HTTP side'),
  },
  {
    target: srcExcept('processing', 'worker.module.ts'),
    from: './src/processing',
    message: why('only the worker module (src/worker.module.ts) imports processing'),
  },
  {
    target: './src/media',
    from: './src',
    except: ['./media'],
    message: why('media is a leaf: plain functions over ffmpeg/ffprobe, it imports nothing else of src'),
  },
  {
    target: srcExcept('processing', 'media', 'jobs'),
    from: './src/media',
    message: why('only processing and jobs import src/media (the worker, and the submit)'),
  },
  {
    // The API probes at submit (probe.ts) and validates, prices and estimates the output with values and
    // arithmetic only; encoding argv, pipelines, speech detection and output checks are the worker's.
    target: './src/jobs',
    from: './src/media',
    except: [
      './probe.ts',
      './media.types.ts',
      './encoder-settings.ts',
      './quality-presets.ts',
      './hdr-mapping.ts',
      './output-geometry.ts',
      './output-spec.ts',
      './ladder.ts',
      './segment-plan.ts',
      './pixel-budget.ts',
    ],
    message: why('the API process never loads ffmpeg argv builders or pipelines: only processing imports them'),
  },
  {
    target: srcExcept('docs', 'http-app.ts', 'openapi.ts'),
    from: './src/docs',
    message: why(
      'only the app (src/http-app.ts, src/openapi.ts) imports src/docs; route decorators are in src/common/openapi',
    ),
  },
  {
    target: './src/common',
    from: './src',
    except: ['./common'],
    message: why('src/common imports nothing from a feature module'),
  },
  {
    target: './src/queues',
    from: './src',
    except: ['./queues', './common', './metrics'],
    message: why('src/queues imports only src/common and src/metrics'),
  },
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-bench/**',
      'node_modules/**',
      // The SDK is linted like the rest; its build output and the wire types generated from the
      // service's OpenAPI document (scripts/generate-types.js) are not source.
      'sdk/dist/**',
      'sdk/build/**',
      'sdk/node_modules/**',
      'sdk/src/generated/**',
      'coverage/**',
      'scripts/**',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { import: importPlugin },
    settings: { 'import/resolver': { node: { extensions: ['.ts', '.js', '.json'] } } },
    rules: {
      'import/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: DEPENDENCY_ZONES }],
    },
  },
  // The SDK's tests are in its test project (sdk/tsconfig.test.json), not in the one its sources build with.
  {
    files: ['sdk/test/**/*.ts'],
    languageOptions: {
      parserOptions: {
        projectService: false,
        project: './sdk/tsconfig.test.json',
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // node:test's describe/it/test return promises the runner itself awaits (its tests run in order).
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite', 'before', 'after'] },
          ],
        },
      ],
    },
  },
  // Tests and benchmarks read arbitrary JSON bodies.
  { files: ['test/**/*.ts', 'bench/**/*.ts', '**/*.spec.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
