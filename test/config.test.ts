import { describe, expect, it } from 'vitest';
import { loadConfig, onrampProviderOf } from '../shared/config';
import { compose } from '../shared/composition';
import { caip2Network } from '../shared/domain/x402';

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

  describe('chain networks', () => {
    const development = { STORE: 'memory', APP_ENV: 'development' };
    const production = { STORE: 'memory', JWT_SECRET: 'x'.repeat(32), DATA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
    const chain = { SPLIT_FACTORY_ADDRESS: `0x${'1'.repeat(40)}`, RELAYER_PRIVATE_KEY: `0x${'2'.repeat(64)}` };
    const network = (env: Record<string, string>) => {
      const config = loadConfig(env);
      return {
        chainId: config.CHAIN_ID,
        x402: caip2Network(config.CHAIN_ID),
        usdc: config.USDC_ADDRESS,
        usdt: config.USDT_ADDRESS,
        feed: config.ETH_USD_FEED_ADDRESS,
        heartbeat: config.FEED_HEARTBEAT_SECONDS,
        confirmations: config.CHAIN_CONFIRMATIONS,
        explorer: config.CHAIN_EXPLORER_URL,
      };
    };

    // The addresses as Circle and Chainlink publish them; Tether issues no USDT on Base.
    it('fills in Base: Circle’s USDC, no USDT, Chainlink’s ETH/USD, BaseScan, 2 confirmations, eip155:8453', () => {
      expect(network({ ...production, CHAIN_NETWORK: 'base' })).toEqual({
        chainId: 8453,
        x402: 'eip155:8453',
        usdc: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
        usdt: undefined,
        feed: '0x71041dddad3595f9ced3dccfbe3d1f4b0a16bb70',
        heartbeat: 1500,
        confirmations: 2,
        explorer: 'https://basescan.org',
      });
    });

    it('fills in Base Sepolia: Circle’s test USDC, no USDT, Chainlink’s ETH/USD there, Sepolia BaseScan, eip155:84532', () => {
      expect(network({ ...production, CHAIN_NETWORK: 'base-sepolia' })).toEqual({
        chainId: 84532,
        x402: 'eip155:84532',
        usdc: '0x036cbd53842c5426634e7929541ec2318f3dcf7e',
        usdt: undefined,
        feed: '0x4adc67696ba383f43dd60a9e78f2c97fbbfc7cb1',
        heartbeat: 1500,
        confirmations: 2,
        explorer: 'https://sepolia.basescan.org',
      });
    });

    it('fills in the local chain (anvil’s id, one confirmation, nothing else), and nothing without a network', () => {
      expect(network({ ...development, CHAIN_NETWORK: 'local' })).toEqual({
        chainId: 31337,
        x402: 'eip155:31337',
        usdc: undefined,
        usdt: undefined,
        feed: undefined,
        heartbeat: 3600,
        confirmations: 1,
        explorer: undefined,
      });
      expect(network(development)).toMatchObject({ chainId: 31337, usdc: undefined, confirmations: 2, explorer: undefined, heartbeat: 3600 });
    });

    it('lets each setting override its preset value, an empty one counting as unset', () => {
      const usdt = `0x${'Ab'.repeat(20)}`;
      expect(
        network({
          ...production,
          CHAIN_NETWORK: 'base',
          USDT_ADDRESS: usdt,
          USDC_ADDRESS: `0x${'cd'.repeat(20)}`,
          ETH_USD_FEED_ADDRESS: `0x${'ef'.repeat(20)}`,
          FEED_HEARTBEAT_SECONDS: '4000',
          CHAIN_CONFIRMATIONS: '6',
          CHAIN_EXPLORER_URL: 'https://explorer.example.com/',
          CHAIN_ID: '8454',
        }),
      ).toEqual({
        chainId: 8454,
        x402: 'eip155:8454',
        usdc: `0x${'cd'.repeat(20)}`,
        usdt: usdt.toLowerCase(),
        feed: `0x${'ef'.repeat(20)}`,
        heartbeat: 4000,
        confirmations: 6,
        explorer: 'https://explorer.example.com',
      });
      expect(network({ ...production, CHAIN_NETWORK: 'base', CHAIN_CONFIRMATIONS: '', USDC_ADDRESS: '' })).toMatchObject({ confirmations: 2, usdc: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913' });
    });

    it('refuses a network it does not know, naming it', () => {
      expect(() => loadConfig({ ...development, CHAIN_NETWORK: 'mainnet' })).toThrowError(/CHAIN_NETWORK: .*base.*base-sepolia.*local/);
    });

    it('refuses in production the local network and every local-only setting, all in one error', () => {
      expect(() => loadConfig({ ...production, ...chain, CHAIN_NETWORK: 'local', CHAIN_RPC_URL: 'https://rpc.example.com', USDC_ADDRESS: `0x${'3'.repeat(40)}` })).toThrowError(
        /CHAIN_NETWORK: local .*only with APP_ENV=development/,
      );
      let message = '';
      try {
        loadConfig({
          ...production,
          ...chain,
          CHAIN_RPC_URL: 'http://127.0.0.1:8545',
          USDC_ADDRESS: `0x${'3'.repeat(40)}`,
          X402_FACILITATOR_URL: 'http://localhost:4021',
          ONRAMP_PROVIDER: 'stripe',
          STRIPE_SECRET_KEY: 'sk_test_123',
          STRIPE_WEBHOOK_SECRET: 'whsec_123',
          STRIPE_API_URL: 'http://[::1]:12111',
          ONRAMP_SANDBOX_FUNDER_KEY: `0x${'1f'.repeat(32)}`,
        });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message.split('\n').slice(1).map((line) => line.trim().split(':')[0])).toEqual([
        'CHAIN_ID',
        'CHAIN_RPC_URL',
        'X402_FACILITATOR_URL',
        'STRIPE_API_URL',
        'ONRAMP_SANDBOX_FUNDER_KEY',
      ]);
      expect(message).toMatch(/CHAIN_ID: 31337 is the local chain's/);
      // Development takes all of them; production takes a real network.
      expect(() => loadConfig({ ...development, ...chain, CHAIN_NETWORK: 'local', CHAIN_RPC_URL: 'http://127.0.0.1:8545', USDC_ADDRESS: `0x${'3'.repeat(40)}`, ONRAMP_SANDBOX_FUNDER_KEY: `0x${'1f'.repeat(32)}` })).not.toThrow();
      expect(loadConfig({ ...production, ...chain, CHAIN_NETWORK: 'base', CHAIN_RPC_URL: 'https://rpc.example.com' }).CHAIN_ID).toBe(8453);
      expect(loadConfig({ ...production, ...chain, CHAIN_ID: '8453', CHAIN_RPC_URL: 'https://rpc.example.com', USDC_ADDRESS: `0x${'3'.repeat(40)}` }).CHAIN_NETWORK).toBeUndefined();
    });
  });
});
