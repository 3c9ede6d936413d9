import { redactUrl } from './logger';

describe('redactUrl', () => {
  it.each([
    ['/v1/assets/ast_1/content?expires=1&signature=abc', '/v1/assets/ast_1/content?expires=1&signature=[redacted]'],
    ['/v1/account/credits?api_key=mjk_x&limit=1', '/v1/account/credits?api_key=[redacted]&limit=1'],
    ['/v1/jobs?API-KEY=mjk_x', '/v1/jobs?API-KEY=[redacted]'],
    ['/v1/x?%61pi_key=mjk_x', '/v1/x?%61pi_key=[redacted]'],
    [
      '/v1/x?X-Amz-Signature=s&X-Amz-Credential=c&X-Amz-Date=d',
      '/v1/x?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&X-Amz-Date=d',
    ],
    ['/v1/x?token', '/v1/x?token=[redacted]'],
    [
      '/v1/x?X-Admin-Token=a&x-api-key=b&admin_token=c&license_key=d&password=e&New_Password=f&mj_session=g',
      '/v1/x?X-Admin-Token=[redacted]&x-api-key=[redacted]&admin_token=[redacted]&license_key=[redacted]&password=[redacted]&New_Password=[redacted]&mj_session=[redacted]',
    ],
    ['/v1/x?__Host-mj_session=a&x_csrf_token=b', '/v1/x?__Host-mj_session=[redacted]&x_csrf_token=[redacted]'],
    ['/v1/jobs?limit=5&starting_after=job_1', '/v1/jobs?limit=5&starting_after=job_1'],
    ['/v1/jobs', '/v1/jobs'],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});
