// The baseline of the storage upload benchmark: an ordinary @aws-sdk/lib-storage Upload of a local file
// (its own small process, like any script of a customer's), to the same store, in the same parts as our
// API. POST /upload?key=… uploads UPLOAD_FILE and answers when the object is complete.
import { Upload } from '@aws-sdk/lib-storage';
import Fastify from 'fastify';
import { createReadStream } from 'node:fs';
import { createS3Client } from '../../src/common/storage/s3-client';
import { serve } from './serve';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const bucket = env('S3_BUCKET');
const client = createS3Client({
  bucket,
  prefix: '',
  endpoint: env('S3_ENDPOINT'),
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: env('AWS_ACCESS_KEY_ID'), secretAccessKey: env('AWS_SECRET_ACCESS_KEY') },
});
const app = Fastify({ logger: false });
app.post<{ Querystring: { key: string } }>('/upload', async (request) => {
  await new Upload({
    client,
    params: { Bucket: bucket, Key: request.query.key, Body: createReadStream(env('UPLOAD_FILE')) },
    partSize: Number(env('PART_BYTES')),
    queueSize: Number(env('PARTS_IN_FLIGHT')),
  }).done();
  return { ok: true };
});
serve(app, async () => client.destroy());
