// Both storage backends against the same contract: the local folder, and S3 against a real Swift
// with s3api (real signatures, real multipart uploads), started once for this file.
import {
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { access, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { LocalStorage } from '../../src/common/storage/local-storage';
import { createS3Client } from '../../src/common/storage/s3-client';
import { S3Storage, SINGLE_PUT_MAX_BYTES } from '../../src/common/storage/s3-storage';
import { SizeLimitExceeded, StorageUnavailableError, type Storage } from '../../src/common/storage/storage';
import { startApi } from '../support/app';
import { startSwift, type SwiftServer } from '../support/swift';

const MiB = 1024 * 1024;

/** `total` random bytes in chunks of `chunk`, failing with `failAt` bytes sent when given. */
function source(
  total: number,
  options: { chunk?: number; failAt?: number } = {},
): { stream: Readable; sha256: string } {
  const data = randomBytes(total);
  const chunk = options.chunk ?? 256 * 1024;
  let offset = 0;
  const stream = new Readable({
    read() {
      if (options.failAt !== undefined && offset >= options.failAt) {
        this.destroy(new Error('client went away'));
        return;
      }
      if (offset >= total) return this.push(null);
      this.push(data.subarray(offset, offset + chunk));
      offset += chunk;
    },
  });
  return { stream, sha256: createHash('sha256').update(data).digest('hex') };
}

async function sha256Of(body: Readable | null): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of body!) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function keys(storage: Storage, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of storage.list(prefix)) found.push(entry.key);
  return found.sort();
}

let swift: SwiftServer;
let scratch: string;
let bucketSeq = 0;

function s3Settings(bucket: string, prefix = 'tenant-a/') {
  return {
    bucket,
    prefix,
    endpoint: swift.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: swift.accessKeyId, secretAccessKey: swift.secretAccessKey },
  };
}

async function newS3(prefix = 'tenant-a/'): Promise<{ storage: S3Storage; client: S3Client; bucket: string }> {
  const bucket = `mj-test-${process.pid}-${(bucketSeq += 1)}`;
  const storage = new S3Storage(s3Settings(bucket, prefix));
  await storage.prepare();
  return { storage, client: createS3Client(s3Settings(bucket, prefix)), bucket };
}

async function multipartUploads(client: S3Client, bucket: string): Promise<number> {
  const listed = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  return (listed.Uploads ?? []).length;
}

beforeAll(async () => {
  swift = await startSwift();
  scratch = await mkdtemp(join(tmpdir(), 'mj-storage-test-'));
}, 180_000);

afterAll(async () => {
  await swift?.stop();
  await rm(scratch, { recursive: true, force: true });
});

describe.each([
  ['local', async (): Promise<Storage> => new LocalStorage(await mkdtemp(join(scratch, 'local-')))],
  ['s3', async (): Promise<Storage> => (await newS3()).storage],
])('the %s backend', (_name, make) => {
  let storage: Storage;
  beforeAll(async () => {
    storage = await make();
    await storage.prepare();
  });

  test('stores a stream with its size and SHA-256, reads it whole or by range, lists and deletes it', async () => {
    const { stream, sha256 } = source(300_000);
    const stored = await storage.write('uploads/acct/a', stream, 1_000_000);
    expect(stored).toEqual({ sizeBytes: 300_000, sha256 });
    expect(await storage.size('uploads/acct/a')).toBe(300_000);
    expect(await sha256Of(await storage.read('uploads/acct/a'))).toBe(sha256);

    await storage.write('uploads/acct/b', Readable.from([Buffer.from('0123456789')]), 100);
    expect(await text((await storage.read('uploads/acct/b', { start: 2, end: 5 }))!)).toBe('2345');
    expect(await keys(storage, 'uploads/acct/')).toEqual(['uploads/acct/a', 'uploads/acct/b']);

    await storage.remove('uploads/acct/a');
    expect(await storage.size('uploads/acct/a')).toBeNull();
    expect(await storage.read('uploads/acct/a')).toBeNull();
    await storage.remove('uploads/acct/a'); // removing what is gone is fine
    await storage.removeMany(['uploads/acct/b', 'uploads/acct/never-was']);
    expect(await keys(storage, 'uploads/acct/')).toEqual([]);
  });

  test('over the size limit it fails with SizeLimitExceeded and keeps nothing', async () => {
    const { stream } = source(3 * MiB);
    await expect(storage.write('uploads/acct/big', stream, 2 * MiB)).rejects.toBeInstanceOf(SizeLimitExceeded);
    expect(await storage.size('uploads/acct/big')).toBeNull();
    expect(await keys(storage, 'uploads/')).toEqual([]);
  });

  test('gives media tools a local file or a readable location', async () => {
    await storage.write('outputs/acct/job/0.mp4', Readable.from([Buffer.from('media bytes')]), 100);
    const file = await storage.localFile('outputs/acct/job/0.mp4', join(scratch, `copy-${_name}`));
    expect(await readFile(file!, 'utf8')).toBe('media bytes');
    expect(await storage.localFile('outputs/acct/job/9.mp4', join(scratch, `missing-${_name}`))).toBeNull();
    const location = await storage.mediaLocation('outputs/acct/job/0.mp4', 60);
    const bytes = location.startsWith('http') ? await (await fetch(location)).text() : await readFile(location, 'utf8');
    expect(bytes).toBe('media bytes');
  });

  test("stores a worker's finished file with its size; a missing file fails and stores nothing", async () => {
    const data = randomBytes(300_000);
    const file = join(scratch, `finished-${_name}.mp4`);
    await writeFile(file, data);
    expect(await storage.writeFile('outputs/acct/job/1-run.mp4', file)).toEqual({ sizeBytes: data.length });
    expect(await sha256Of(await storage.read('outputs/acct/job/1-run.mp4'))).toBe(
      createHash('sha256').update(data).digest('hex'),
    );
    await expect(storage.writeFile('outputs/acct/job/2.mp4', join(scratch, 'no-such-file'))).rejects.toThrow();
    expect(await storage.size('outputs/acct/job/2.mp4')).toBeNull();
  });
});

describe('the local backend', () => {
  test('writeFile moves a file on the same file system, and copies one from another (no partial left)', async () => {
    const root = await mkdtemp(join(scratch, 'local-move-'));
    const storage = new LocalStorage(root);
    const here = join(scratch, 'same-fs.mp4');
    await writeFile(here, 'moved');
    expect(await storage.writeFile('outputs/a/j/0.mp4', here)).toEqual({ sizeBytes: 5 });
    await expect(access(here)).rejects.toThrow(); // moved, not copied
    expect(await text((await storage.read('outputs/a/j/0.mp4'))!)).toBe('moved');
    // /dev/shm is another file system (tmpfs) where there is one: a rename fails with EXDEV, the file is copied.
    const elsewhere = await mkdtemp(
      join(
        await access('/dev/shm').then(
          () => '/dev/shm',
          () => scratch,
        ),
        'mj-',
      ),
    );
    try {
      await writeFile(join(elsewhere, 'out.mp4'), 'copied');
      expect(await storage.writeFile('outputs/a/j/1.mp4', join(elsewhere, 'out.mp4'))).toEqual({ sizeBytes: 6 });
      expect(await text((await storage.read('outputs/a/j/1.mp4'))!)).toBe('copied');
      expect((await readdir(join(root, 'outputs/a/j'))).sort()).toEqual(['0.mp4', '1.mp4']);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});

describe('the s3 backend', () => {
  test('creates its bucket at start-up when missing, and prepare is repeatable', async () => {
    const { storage, client, bucket } = await newS3();
    await storage.prepare();
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(listed.KeyCount ?? 0).toBe(0);
  });

  test('keys live under S3_PREFIX', async () => {
    const { storage, client, bucket } = await newS3('deploy-1/');
    await storage.write('uploads/x/y', Readable.from([Buffer.from('z')]), 10);
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(listed.Contents?.map((object) => object.Key)).toEqual(['deploy-1/uploads/x/y']);
  });

  test('streams a large body as a multipart upload, hashing on the way', async () => {
    const { storage, client, bucket } = await newS3();
    const { stream, sha256 } = source(20 * MiB, { chunk: 64 * 1024 });
    const stored = await storage.write('uploads/acct/large', stream, 64 * MiB);
    expect(stored).toEqual({ sizeBytes: 20 * MiB, sha256 });
    expect(await sha256Of(await storage.read('uploads/acct/large'))).toBe(sha256);
    const tail = await storage.read('uploads/acct/large', { start: 20 * MiB - 10, end: 20 * MiB - 1 });
    expect((await tail!.toArray()).reduce((sum, chunk: Buffer) => sum + chunk.length, 0)).toBe(10);
    expect(await multipartUploads(client, bucket)).toBe(0);
  });

  test('bodies at and around the 8 MiB part size, in odd chunks, are stored whole', async () => {
    const { storage, client, bucket } = await newS3();
    // One part exactly (a single PUT), one byte more (two parts), and more parts than are in flight at
    // once (part buffers are reused), each sent in chunks that straddle part boundaries.
    for (const [index, size] of [0, 8 * MiB, 8 * MiB + 1, 3 * 8 * MiB + 12_345].entries()) {
      const { stream, sha256 } = source(size, { chunk: 100_003 });
      const stored = await storage.write(`uploads/acct/edge-${index}`, stream, 64 * MiB);
      expect(stored).toEqual({ sizeBytes: size, sha256 });
      expect(await storage.size(`uploads/acct/edge-${index}`)).toBe(size);
      expect(await sha256Of(await storage.read(`uploads/acct/edge-${index}`))).toBe(sha256);
    }
    expect(await multipartUploads(client, bucket)).toBe(0);
  });

  test('a store that goes down during a multipart upload fails it with StorageUnavailableError', async () => {
    const { storage } = await newS3();
    const data = randomBytes(MiB);
    let sent = 0;
    const stream = new Readable({
      read() {
        sent += data.length;
        // Past the first part: the multipart upload exists and parts are on their way.
        if (sent === 12 * MiB) void swift.stopProxy().then(() => this.push(data));
        else if (sent > 40 * MiB) this.push(null);
        else this.push(data);
      },
    });
    try {
      await expect(storage.write('uploads/acct/cut', stream, 64 * MiB)).rejects.toBeInstanceOf(StorageUnavailableError);
    } finally {
      await swift.startProxy();
    }
    expect(await storage.size('uploads/acct/cut')).toBeNull();
  });

  test('over the limit after parts were sent, the multipart upload is aborted', async () => {
    const { storage, client, bucket } = await newS3();
    const { stream } = source(30 * MiB);
    await expect(storage.write('uploads/acct/over', stream, 20 * MiB)).rejects.toBeInstanceOf(SizeLimitExceeded);
    expect(await storage.size('uploads/acct/over')).toBeNull();
    expect(await multipartUploads(client, bucket)).toBe(0);
  });

  test('a source that fails mid-way aborts the multipart upload', async () => {
    const { storage, client, bucket } = await newS3();
    const { stream } = source(30 * MiB, { failAt: 18 * MiB });
    await expect(storage.write('uploads/acct/broken', stream, 64 * MiB)).rejects.toThrow('client went away');
    expect(await storage.size('uploads/acct/broken')).toBeNull();
    expect(await multipartUploads(client, bucket)).toBe(0);
  });

  test('abortUnfinished removes multipart uploads left by a process that died', async () => {
    const { storage, client, bucket } = await newS3();
    await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'tenant-a/outputs/a/job/0.mp4' }));
    expect(await storage.abortUnfinished(new Date(Date.now() - 3600_000))).toBe(0); // too young
    expect(await storage.abortUnfinished(new Date(Date.now() + 60_000))).toBe(1);
    expect(await multipartUploads(client, bucket)).toBe(0);
  });

  test('a presigned location with a tampered signature is refused', async () => {
    const { storage } = await newS3();
    await storage.write('uploads/a/b', Readable.from([Buffer.from('secret')]), 10);
    const location = new URL(await storage.mediaLocation('uploads/a/b', 60));
    location.searchParams.set('X-Amz-Signature', '0'.repeat(64));
    expect((await fetch(location)).status).toBe(403);
  });

  test('writeFile sends a file over SINGLE_PUT_MAX_BYTES as a multipart upload, whole', async () => {
    const { storage, client, bucket } = await newS3();
    const data = randomBytes(SINGLE_PUT_MAX_BYTES + MiB);
    const file = join(scratch, 'large-output.mp4');
    await writeFile(file, data);
    try {
      expect(await storage.writeFile('outputs/a/j/0.mp4', file)).toEqual({ sizeBytes: data.length });
      expect(await sha256Of(await storage.read('outputs/a/j/0.mp4'))).toBe(
        createHash('sha256').update(data).digest('hex'),
      );
      expect(await multipartUploads(client, bucket)).toBe(0);
    } finally {
      await rm(file, { force: true });
    }
  }, 60_000);

  test('a store that is down fails each call with StorageUnavailableError instead of hanging', async () => {
    const { storage } = await newS3();
    await storage.write('uploads/a/kept', Readable.from([Buffer.from('kept')]), 10);
    const finished = join(scratch, 'finished-while-down.mp4');
    await writeFile(finished, 'output');
    await swift.stopProxy();
    try {
      await expect(storage.size('uploads/a/kept')).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(storage.read('uploads/a/kept')).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(storage.write('uploads/a/new', source(1000).stream, 10_000)).rejects.toBeInstanceOf(
        StorageUnavailableError,
      );
      await expect(storage.writeFile('outputs/a/j/0.mp4', finished)).rejects.toBeInstanceOf(StorageUnavailableError);
    } finally {
      await swift.startProxy();
    }
    expect(await text((await storage.read('uploads/a/kept'))!)).toBe('kept');
  });
});

describe('closing', () => {
  /**
   * This process's TCP connections to the store, idle keep-alive ones included (they are unreferenced,
   * so Node's own handle list omits them; each still holds a descriptor and a connection): from
   * /proc/net/tcp, the sockets whose inode is one of this process's open descriptors.
   * Each by its socket inode.
   */
  async function connectionsToStore(): Promise<Set<string>> {
    const port = Number(new URL(swift.endpoint).port);
    const ours = new Set<string>();
    for (const fd of await readdir('/proc/self/fd')) {
      const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) ours.add(inode);
    }
    const rows = (await readFile('/proc/net/tcp', 'utf8')).split('\n').slice(1);
    const open = new Set<string>();
    for (const row of rows) {
      const fields = row.trim().split(/\s+/);
      if (fields.length > 9 && parseInt(fields[2].split(':')[1], 16) === port && ours.has(fields[9]))
        open.add(fields[9]);
    }
    return open;
  }

  /** The connections in `now` that were not open `before`: the earlier tests' clients may close theirs meanwhile. */
  const opened = (before: Set<string>, now: Set<string>) => [...now].filter((inode) => !before.has(inode));

  test('an API on the S3 backend keeps no connection to the store once app.close() has returned', async () => {
    const before = await connectionsToStore();
    // Start-up checks (and creates) the bucket: the SDK keeps that connection alive for the next call.
    const api = await startApi({ ...swift.env(`mj-test-${process.pid}-closing`, 'closing/') });
    try {
      expect(opened(before, await connectionsToStore()).length).toBeGreaterThan(0);
    } finally {
      await api.close();
    }
    expect(opened(before, await connectionsToStore())).toEqual([]);
  });
});
