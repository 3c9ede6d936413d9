import { ConfigError, parseConfig } from './config';

const s3 = {
  STORAGE_BACKEND: 's3',
  S3_BUCKET: 'media-bucket',
  S3_ENDPOINT: 'http://127.0.0.1:9000',
  AWS_ACCESS_KEY_ID: 'key',
  AWS_SECRET_ACCESS_KEY: 'secret',
};

describe('storage configuration (docs/api-decisions.md §11)', () => {
  test('the local folder is the default', () => {
    expect(parseConfig({}).storage).toEqual({ backend: 'local' });
  });

  test('s3 with an endpoint: path style by default, prefix normalised, credentials kept', () => {
    expect(parseConfig({ ...s3, S3_PREFIX: 'prod' }).storage).toEqual({
      backend: 's3',
      bucket: 'media-bucket',
      prefix: 'prod/',
      endpoint: 'http://127.0.0.1:9000',
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'key', secretAccessKey: 'secret' },
    });
  });

  test('s3 on AWS: no endpoint, virtual-hosted style, the SDK default credential chain', () => {
    expect(parseConfig({ STORAGE_BACKEND: 's3', S3_BUCKET: 'media-bucket', S3_REGION: 'eu-west-1' }).storage).toEqual(
      expect.objectContaining({ endpoint: null, region: 'eu-west-1', forcePathStyle: false, credentials: null }),
    );
  });

  test.each([
    [{ STORAGE_BACKEND: 'nfs' }, /STORAGE_BACKEND must be local or s3/],
    [{ ...s3, S3_BUCKET: '' }, /S3_BUCKET must be set/],
    [{ ...s3, S3_BUCKET: 'Bad_Bucket' }, /S3_BUCKET/],
    [{ ...s3, S3_ENDPOINT: 'ftp://x' }, /S3_ENDPOINT must use one of http:, https:/],
    [{ ...s3, S3_FORCE_PATH_STYLE: 'yes' }, /S3_FORCE_PATH_STYLE must be true or false/],
    [{ ...s3, S3_PREFIX: '/abs' }, /S3_PREFIX/],
    [{ ...s3, AWS_SECRET_ACCESS_KEY: '' }, /must be set together/],
  ])('refuses %p', (env, message) => {
    expect(() => parseConfig(env)).toThrow(ConfigError);
    expect(() => parseConfig(env)).toThrow(message);
  });
});
