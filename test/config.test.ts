import { describe, expect, it } from 'vitest';
import { loadConfig, onrampProviderOf } from '../shared/config';
import { compose } from '../shared/composition';

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

  it('reads retired receipt signers as address@time (ISO 8601 or Unix ms), and refuses anything else', () => {
    const env = { STORE: 'memory', APP_ENV: 'development' };
    const a = `0x${'Ab'.repeat(20)}`;
    const b = `0x${'cd'.repeat(20)}`;
    expect(loadConfig(env).RECEIPT_SIGNERS_RETIRED).toEqual([]);
    expect(loadConfig({ ...env, RECEIPT_SIGNERS_RETIRED: ` ${a}@2026-12-01T00:00:00Z , ${b}@1764547200000,` }).RECEIPT_SIGNERS_RETIRED).toEqual([
      { address: a.toLowerCase(), retiredAt: Date.UTC(2026, 11, 1) },
      { address: b, retiredAt: 1_764_547_200_000 },
    ]);
    for (const bad of [a, `${a}@`, `${a}@yesterday`, `0x1234@2026-12-01`, `${a}@2026-12-01,${a.toLowerCase()}@2026-12-02`, `${a}@0`]) {
      expect(() => loadConfig({ ...env, RECEIPT_SIGNERS_RETIRED: bad }), bad).toThrowError(/RECEIPT_SIGNERS_RETIRED/);
    }
  });

  it('has defaults for the rest, treats empty values as unset and merges plan quotas', () => {
    const config = loadConfig({ STORE: 'memory', BASE_URL: '', PLAN_QUOTAS: '{"starter": 10}', JWT_SECRET: 'x'.repeat(32), DATA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') });
    expect(config).toMatchObject({ APP_ENV: 'production', BASE_URL: 'http://localhost:7071', STORE_AUTO_CREATE: false });
    expect(config.PLAN_QUOTAS).toEqual({ starter: 10, pro: 600, enterprise: 3000, development: 1_000_000 });
  });

  describe('the card on-ramp', () => {
    const production = { STORE: 'memory', JWT_SECRET: 'x'.repeat(32), DATA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };

    it('is the sandbox in development and none elsewhere, unless named', () => {
      expect(onrampProviderOf(loadConfig({ STORE: 'memory', APP_ENV: 'development' }))).toBe('sandbox');
      expect(onrampProviderOf(loadConfig(production))).toBe('none');
      expect(compose(loadConfig(production)).deps.onramp).toBeUndefined();
      expect(compose(loadConfig({ STORE: 'memory', APP_ENV: 'development' })).deps.onramp?.name).toBe('sandbox');
      expect(compose(loadConfig({ STORE: 'memory', APP_ENV: 'development', ONRAMP_PROVIDER: 'none' })).deps.onramp).toBeUndefined();
    });

    it("refuses Stripe without its secrets, the sandbox in production (with or without its secret), and an unresolved Key Vault reference", () => {
      expect(() => loadConfig({ ...production, ONRAMP_PROVIDER: 'stripe' })).toThrowError(/STRIPE_SECRET_KEY: required when ONRAMP_PROVIDER=stripe[\s\S]*STRIPE_WEBHOOK_SECRET: required/);
      expect(() => loadConfig({ ...production, ONRAMP_PROVIDER: 'sandbox' })).toThrowError(/ONRAMP_PROVIDER: sandbox only with APP_ENV=development/);
      expect(() => loadConfig({ ...production, ONRAMP_PROVIDER: 'sandbox', ONRAMP_SANDBOX_SECRET: 's'.repeat(32), ONRAMP_SANDBOX_FUNDER_KEY: `0x${'1f'.repeat(32)}` })).toThrowError(/ONRAMP_PROVIDER: sandbox only with APP_ENV=development/);
      expect(onrampProviderOf(loadConfig({ STORE: 'memory', APP_ENV: 'development', ONRAMP_PROVIDER: 'sandbox', ONRAMP_SANDBOX_SECRET: 's'.repeat(32) }))).toBe('sandbox');
      expect(() => loadConfig({ ...production, ONRAMP_PROVIDER: 'stripe', STRIPE_SECRET_KEY: '@Microsoft.KeyVault(SecretUri=https://kv/secrets/stripe-secret-key/)', STRIPE_WEBHOOK_SECRET: 'whsec_x' })).toThrowError(
        /STRIPE_SECRET_KEY: the Key Vault reference did not resolve/,
      );
      expect(() => loadConfig({ ...production, ONRAMP_PROVIDER: 'paypal' })).toThrowError(/ONRAMP_PROVIDER/);
      const stripe = compose(loadConfig({ ...production, ONRAMP_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_WEBHOOK_SECRET: 'whsec_123' }));
      expect(stripe.deps.onramp?.name).toBe('stripe');
      expect(stripe.deps.onrampSandbox).toBeUndefined();
    });
  });
});
