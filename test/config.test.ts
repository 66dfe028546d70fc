import { describe, expect, it } from 'vitest';
import { loadConfig } from '../shared/config';

describe('configuration', () => {
  it('fails fast, listing every bad key', () => {
    expect(() => loadConfig({ APP_ENV: 'staging', BASE_URL: 'not a url', PLAN_QUOTAS: '{oops', STORE: 'memory' })).toThrowError(
      /APP_ENV[\s\S]*BASE_URL[\s\S]*PLAN_QUOTAS/,
    );
    expect(() => loadConfig({})).toThrowError(/COSMOS_ENDPOINT[\s\S]*DATA_ENCRYPTION_KEY[\s\S]*JWT_SECRET/);
    expect(() => loadConfig({ STORE: 'memory', APP_ENV: 'development', JWT_SECRET: 'short' })).toThrowError(/JWT_SECRET: must be at least 32/);
  });

  it('has defaults for the rest, treats empty values as unset and merges plan quotas', () => {
    const config = loadConfig({ STORE: 'memory', BASE_URL: '', PLAN_QUOTAS: '{"starter": 10}', JWT_SECRET: 'x'.repeat(32), DATA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') });
    expect(config).toMatchObject({ APP_ENV: 'production', BASE_URL: 'http://localhost:7071', STORE_AUTO_CREATE: false });
    expect(config.PLAN_QUOTAS).toEqual({ starter: 10, pro: 600, enterprise: 3000, development: 1_000_000 });
  });
});
