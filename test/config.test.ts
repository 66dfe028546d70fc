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

  it('takes a receipt-signing key only as a secp256k1 private key, and refuses an unresolved Key Vault reference to it', () => {
    const env = { STORE: 'memory', APP_ENV: 'development' };
    const key = `0x${'1f'.repeat(32)}`;
    expect(loadConfig({ ...env, RECEIPT_SIGNING_KEY: key }).RECEIPT_SIGNING_KEY).toBe(key);
    expect(loadConfig(env).RECEIPT_SIGNING_KEY).toBeUndefined();
    for (const bad of ['1f'.repeat(32), `0x${'1f'.repeat(31)}`, `0x${'0'.repeat(64)}`, `0x${'f'.repeat(64)}`]) {
      expect(() => loadConfig({ ...env, RECEIPT_SIGNING_KEY: bad }), bad).toThrowError(/RECEIPT_SIGNING_KEY: must be/);
    }
    expect(() => loadConfig({ ...env, RECEIPT_SIGNING_KEY: '@Microsoft.KeyVault(SecretUri=https://kv.vault.azure.net/secrets/receipt-signing-key/)' })).toThrowError(/RECEIPT_SIGNING_KEY: the Key Vault reference did not resolve/);
  });

  it('has defaults for the rest, treats empty values as unset and merges plan quotas', () => {
    const config = loadConfig({ STORE: 'memory', BASE_URL: '', PLAN_QUOTAS: '{"starter": 10}', JWT_SECRET: 'x'.repeat(32), DATA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') });
    expect(config).toMatchObject({ APP_ENV: 'production', BASE_URL: 'http://localhost:7071', STORE_AUTO_CREATE: false });
    expect(config.PLAN_QUOTAS).toEqual({ starter: 10, pro: 600, enterprise: 3000, development: 1_000_000 });
  });
});
