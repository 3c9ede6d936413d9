// Types generated from a running API's /docs/openapi.json by a tool nobody here wrote (openapi-typescript),
// and a program type-checked against them in the same folder: what the docs' and the SDK's type tests share.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestApi } from './app';

export const ROOT = resolve(__dirname, '../..');

export interface ToolRun {
  code: number;
  output: string;
}

function run(command: string, args: string[], cwd: string): Promise<ToolRun> {
  return new Promise((done) => {
    execFile(command, args, { cwd, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

export interface TypesFolder {
  /** The folder: openapi.json, then schema.d.ts, the program and its tsconfig.json. */
  dir: string;
  /** Runs openapi-typescript: openapi.json → schema.d.ts (`import type { paths } from './schema'`). */
  generate(): Promise<ToolRun>;
  /** Writes `program` as `file` and type-checks it alone with `compilerOptions` (strict, no emit). */
  typeCheck(file: string, program: string, compilerOptions: Record<string, unknown>): Promise<ToolRun>;
  remove(): void;
}

/** A fresh temp folder holding `api`'s OpenAPI document. */
export async function typesFolder(api: TestApi, name: string): Promise<TypesFolder> {
  const dir = mkdtempSync(join(tmpdir(), `mj-${name}-`));
  writeFileSync(join(dir, 'openapi.json'), await (await fetch(`${api.url}/docs/openapi.json`)).text());
  return {
    dir,
    generate: () =>
      run(
        join(ROOT, 'node_modules/.bin/openapi-typescript'),
        [join(dir, 'openapi.json'), '--output', join(dir, 'schema.d.ts')],
        dir,
      ),
    async typeCheck(file, program, compilerOptions) {
      writeFileSync(join(dir, file), program);
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { strict: true, noEmit: true, ...compilerOptions }, files: [file] }),
      );
      return run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(dir, 'tsconfig.json')], dir);
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
