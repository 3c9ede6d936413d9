// `npm run swift` (scripts/swift.js) starts a private Swift for trying STORAGE_BACKEND=s3 by hand, prints
// its S3_* settings, serves objects through them, and stops cleanly on Ctrl-C.
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

describe('npm run swift', () => {
  it('prints S3 settings that store and return an object, and exits 0 on Ctrl-C', async () => {
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts.swift).toBe('node scripts/swift.js');

    const child = spawn(process.execPath, [join(ROOT, 'scripts/swift.js')], {
      cwd: ROOT,
      env: { ...process.env, S3_BUCKET: 'by-hand' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    try {
      await new Promise<void>((ready, fail) => {
        child.stdout.on('data', () => stdout.includes('Ctrl-C stops it') && ready());
        void exited.then((code) => fail(new Error(`npm run swift exited ${code} before it was ready:\n${stderr}`)));
      });
      const settings = Object.fromEntries(
        stdout
          .split('\n')
          .filter((line) => /^[A-Z0-9_]+=/.test(line))
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      );
      expect(settings).toMatchObject({ STORAGE_BACKEND: 's3', S3_BUCKET: 'by-hand', S3_FORCE_PATH_STYLE: 'true' });

      const s3 = new S3Client({
        endpoint: settings.S3_ENDPOINT,
        region: settings.S3_REGION,
        forcePathStyle: true,
        credentials: { accessKeyId: settings.AWS_ACCESS_KEY_ID, secretAccessKey: settings.AWS_SECRET_ACCESS_KEY },
      });
      try {
        await s3.send(new CreateBucketCommand({ Bucket: 'by-hand' }));
        await s3.send(new PutObjectCommand({ Bucket: 'by-hand', Key: 'hello.txt', Body: 'hello swift' }));
        const got = await s3.send(new GetObjectCommand({ Bucket: 'by-hand', Key: 'hello.txt' }));
        expect(await got.Body?.transformToString()).toBe('hello swift');
      } finally {
        s3.destroy();
      }
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  }, 180_000);
});
