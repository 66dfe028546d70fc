import { z } from 'zod';
import packageJson from '../package.json';
import { plans, type Plan } from './domain/subscription';
import { X402_ORDER_BOUNDS } from './domain/x402-requests';
import { CHAIN_NETWORKS, CHAIN_PRESETS, LOCAL_CHAIN_ID, type ChainNetwork } from './domain/chain-networks';
import { isLocalRpc } from './adapters/evm/rpc';

const flag = z.enum(['true', 'false']).transform((value) => value === 'true');
const optionalText = z.string().optional();
/** A token amount in atomic units, whole and non-negative, as a bigint. */
const atomicUnits = (fallback: string) =>
  z
    .string()
    .regex(/^\d{1,36}$/, 'must be a whole number of atomic units')
    .default(fallback)
    .transform((text) => BigInt(text));

/**
 * The service's version: package.json's, and nothing else, so /healthz and the OpenAPI documents
 * (served, and the copies API Management imports, generated at build time) always name the same one.
 */
export const APP_VERSION: string = packageJson.version;

/** Private keys are 1 … n − 1 of secp256k1's group order n. */
const SECP256K1_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

const defaultQuotas: Record<Plan, number> = { starter: 60, pro: 600, enterprise: 3000, development: 1_000_000 };

const EnvSchema = z.object({
  APP_ENV: z.enum(['development', 'production']).default('production'),
  BASE_URL: z.url().default('http://localhost:7071').transform((url) => url.replace(/\/+$/, '')),
  STORE: z.enum(['cosmos', 'memory']).default('cosmos'),
  COSMOS_ENDPOINT: optionalText.pipe(z.url().optional()),
  COSMOS_KEY: optionalText,
  COSMOS_DATABASE: z.string().min(1).default('payments'),
  COSMOS_TIMEOUT_MS: z.coerce.number().int().positive().default(3_000),
  AzureWebJobsStorage: optionalText,
  /** Identity-based storage (Azure): the queue endpoint, or the account name it is derived from. */
  AzureWebJobsStorage__queueServiceUri: z.url().optional(),
  AzureWebJobsStorage__accountName: z.string().regex(/^[a-z0-9]{3,24}$/, 'must be a storage account name').optional(),
  STORE_AUTO_CREATE: flag.default(false),
  EDGE_SECRET: optionalText,
  PLAN_QUOTAS: z
    .string()
    .default(JSON.stringify(defaultQuotas))
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON' });
        return z.NEVER;
      }
    })
    .pipe(z.partialRecord(z.enum(plans), z.number().int().positive()))
    .transform((quotas) => ({ ...defaultQuotas, ...quotas })),
  SUBSCRIPTION_CACHE_MS: z.coerce.number().int().min(0).default(2_000),
  /** Calls a minute one client address may make to routes without a key (API Management enforces it in Azure). */
  KEYLESS_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(120),
  /** Calls a minute one client address may make to the x402 routes, besides the keyless limit (API Management enforces it in Azure). */
  X402_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(30),
  /** Calls a minute about one receipt on the buyer's routes (portal), whoever makes them. */
  PORTAL_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(120),
  /** CSP frame-ancestors of the service's pages: `'none'`, `'self'`, or origins separated by spaces. */
  FRAME_ANCESTORS: z
    .string()
    .regex(/^('none'|'self'|https:\/\/[A-Za-z0-9.-]+(:\d+)?)( ('self'|https:\/\/[A-Za-z0-9.-]+(:\d+)?))*$/, "must be 'none', 'self' or https origins separated by spaces")
    .default("'none'"),
  /** Split deployments the relayer pays for, across all merchants, per UTC day. */
  SPLIT_DEPLOY_DAILY_BUDGET: z.coerce.number().int().min(0).default(200),
  /**
   * The relayer's other gas (docs/decisions.md, "The relayer's budget"): x402 settlements and split
   * distributions it pays for per UTC day, all payers and splits together. The defaults are sized to
   * Base's gas; the local stack and in-process tests run with LOCAL_GAS_SETTINGS.
   */
  SETTLEMENT_DAILY_BUDGET: z.coerce.number().int().min(0).default(1_000),
  DISTRIBUTION_DAILY_BUDGET: z.coerce.number().int().min(0).default(1_000),
  /** Deposit sweeps (`sweepMany` transactions of up to 50 deposit addresses) per UTC day, all shops together. */
  SWEEP_DAILY_BUDGET: z.coerce.number().int().min(0).default(50),
  /** The smallest x402 order, USDC atomic units: its platform fee pays for its settlement's gas. */
  X402_MIN_ORDER_USDC: atomicUnits('2000000').refine(
    (units) => units >= X402_ORDER_BOUNDS.min && units <= X402_ORDER_BOUNDS.max,
    `must be between ${X402_ORDER_BOUNDS.min} (0.10 USDC, the interface document's lower bound) and ${X402_ORDER_BOUNDS.max}`,
  ),
  /** What a split must hold of a token (atomic units) before the relayer distributes it; 0: whatever it holds. */
  DISTRIBUTE_MIN_USDC: atomicUnits('5000000'),
  DISTRIBUTE_MIN_USDT: atomicUnits('5000000'),
  DISTRIBUTE_MIN_ETH_WEI: atomicUnits('1250000000000000'),
  /** Signs session tokens (HS256); at least 32 characters. Required outside development. */
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  /** EIP-4361 domain; defaults to the host of BASE_URL. */
  SIWE_DOMAIN: z.string().min(1).optional(),
  /**
   * A chain by name (shared/domain/chain-networks.ts): fills in CHAIN_ID, USDC_ADDRESS, USDT_ADDRESS,
   * ETH_USD_FEED_ADDRESS, FEED_HEARTBEAT_SECONDS, CHAIN_CONFIRMATIONS and CHAIN_EXPLORER_URL, each
   * unless set itself. `local` (anvil) only with APP_ENV=development.
   */
  CHAIN_NETWORK: z.enum(CHAIN_NETWORKS).optional(),
  CHAIN_ID: z.coerce.number().int().positive().default(LOCAL_CHAIN_ID),
  BRAND_KEY: z.string().regex(/^[a-z0-9-]{1,32}$/, 'must be 1–32 of a-z 0-9 -').default('default'),
  BRAND_NAME: z.string().min(1).default('Crypto Receipts'),
  /** The platform's payout wallet in every split. */
  PLATFORM_WALLET: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address').transform((a) => a.toLowerCase()).optional(),
  /** Defaults until a platform admin sets the brand's pricing. */
  PLATFORM_FEE_BPS: z.coerce.number().int().min(0).max(10_000).default(100),
  PARTNER_FEE_BPS: z.coerce.number().int().min(0).max(10_000).default(0),
  PARTNER_WALLET: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address').transform((a) => a.toLowerCase()).optional(),
  CHAIN_RPC_URL: z.url().optional(),
  /**
   * A remote x402 facilitator (its `/verify` and `/settle`) that settles the payments agents make;
   * without it the relayer settles them in process, on the configured chain.
   */
  X402_FACILITATOR_URL: optionalText.pipe(z.url().optional()).transform((url) => url?.replace(/\/+$/, '')),
  APPLICATIONINSIGHTS_CONNECTION_STRING: z.string().optional(),
  WEBHOOK_HEADER_PREFIX: z.string().regex(/^[A-Za-z][A-Za-z0-9-]*-$/, 'must be a header-name prefix ending in -').default('X-Service-'),
  /** 32 bytes, base64: encrypts the API keys that sign webhooks. Required outside development. */
  DATA_ENCRYPTION_KEY: z
    .string()
    .refine((text) => Buffer.from(text, 'base64').length === 32, 'must be 32 bytes, base64-encoded')
    .optional(),
  USDC_ADDRESS: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address').transform((a) => a.toLowerCase()).optional(),
  USDT_ADDRESS: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address').transform((a) => a.toLowerCase()).optional(),
  SPLIT_FACTORY_ADDRESS: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address').transform((a) => a.toLowerCase()).optional(),
  /** The DepositFactory that makes per-receipt deposit addresses: without it the portal makes no quotes (every payment goes to a receipt's own address). */
  DEPOSIT_FACTORY_ADDRESS: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address').transform((a) => a.toLowerCase()).optional(),
  /** Pays gas for the service's own transactions (split deployment, x402 settlement). A secret. */
  RELAYER_PRIVATE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex key').optional(),
  /**
   * Signs paid receipts' proofs (EIP-712), which buyers check against its published address. A secret.
   * Development falls back to a fixed key (the local stack makes one of its own); elsewhere, without
   * it, proofs answer 503 until it is set.
   */
  RECEIPT_SIGNING_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex key')
    // Checked after the form only (a refinement runs on a failed regex too).
    .refine((key) => !/^0x[0-9a-fA-F]{64}$/.test(key) || (BigInt(key) > 0n && BigInt(key) < SECP256K1_ORDER), 'must be a valid secp256k1 private key')
    .optional(),
  /**
   * Receipt-signing keys rotated out, as `0xaddress@time` (an ISO 8601 time or Unix ms), comma-separated:
   * published at `/.well-known/receipt-signer` so proofs they signed for payments before that time keep
   * verifying. The key itself is gone from the service; only its address is kept.
   */
  RECEIPT_SIGNERS_RETIRED: z
    .string()
    .default('')
    .transform((text) => text.split(',').map((entry) => entry.trim()).filter(Boolean))
    .pipe(
      z.array(
        z
          .string()
          .regex(/^0x[0-9a-fA-F]{40}@\S+$/, 'must be 0xaddress@time entries, comma-separated')
          .transform((entry) => {
            const [address, at] = entry.split('@') as [string, string];
            return { address: address.toLowerCase(), retiredAt: /^\d+$/.test(at) ? Number(at) : Date.parse(at) };
          })
          .refine((retired) => Number.isSafeInteger(retired.retiredAt) && retired.retiredAt > 0, 'each time must be an ISO 8601 time or Unix ms'),
      ),
    )
    .refine((retired) => new Set(retired.map((key) => key.address)).size === retired.length, 'an address may be retired once'),
  /** Blocks a payment needs (its own included) before it counts: 1 on the local chain; Base: 2. */
  CHAIN_CONFIRMATIONS: z.coerce.number().int().min(1).max(100).default(2),
  /** Block explorer for links to transactions (`<url>/tx/<hash>`), e.g. https://basescan.org. */
  CHAIN_EXPLORER_URL: optionalText.pipe(z.url().optional()).transform((url) => url?.replace(/\/+$/, '')),
  /** Chainlink ETH/USD AggregatorV3 feed; without it ETH is not offered. */
  ETH_USD_FEED_ADDRESS: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address').transform((a) => a.toLowerCase()).optional(),
  /** A feed answer older than this is stale (Chainlink's heartbeat for the feed, plus a margin). */
  FEED_HEARTBEAT_SECONDS: z.coerce.number().int().positive().default(3_600),
  /** How far a late ETH payment may fall short of the current price and still count (basis points). */
  PAYMENT_SLIPPAGE_BPS: z.coerce.number().int().min(0).max(5_000).default(100),
  /** How long a quote's amount and rate hold. */
  QUOTE_LOCK_SECONDS: z.coerce.number().int().min(30).max(86_400).default(600),
  /** An unpaid receipt fails with PORTAL_SESSION_EXPIRED this long after it was made. */
  RECEIPT_EXPIRY_SECONDS: z.coerce.number().int().min(10).default(86_400),
  /** Blocks one `eth_getLogs` call of the payment watcher may span. */
  WATCH_BLOCK_RANGE: z.coerce.number().int().min(1).max(100_000).default(2_000),
  /**
   * Who sells USDC to card buyers: `stripe` (Stripe's crypto on-ramp), `sandbox` (a page where a
   * tester picks the outcome; the local default) or `none` (no card payments; the default elsewhere).
   */
  ONRAMP_PROVIDER: z.enum(['none', 'sandbox', 'stripe']).optional(),
  STRIPE_SECRET_KEY: optionalText,
  /** The `whsec_…` secret of the Stripe webhook endpoint `/api/onramp/stripe/webhook`. */
  STRIPE_WEBHOOK_SECRET: optionalText,
  /** Another Stripe API origin (a local fake in tests); default Stripe's own. */
  STRIPE_API_URL: optionalText.pipe(z.url().optional()),
  /** Signs the sandbox provider's webhooks; at least 16 characters (development has a fixed default). */
  ONRAMP_SANDBOX_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** The funded account the sandbox sends test USDC from (a development chain's key; never a real one). */
  ONRAMP_SANDBOX_FUNDER_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex key').optional(),
  /** Who issues API keys: this service (`local`) or Azure API Management (`apim`). */
  KEY_ISSUER: z.enum(['local', 'apim']).default('local'),
  AZURE_SUBSCRIPTION_ID: z.string().optional(),
  APIM_RESOURCE_GROUP: z.string().optional(),
  APIM_SERVICE_NAME: z.string().optional(),
  ADMIN_WALLETS: z
    .string()
    .default('')
    .transform((text) => text.split(',').map((wallet) => wallet.trim().toLowerCase()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^0x[0-9a-f]{40}$/, 'must be 0x addresses, comma-separated'))),
});

export type Config = z.output<typeof EnvSchema> & { APP_VERSION: string };

/**
 * The relayer's gas rules where the gas is free (the local chain): orders down to the interface
 * document's lower bound, splits distributed whatever they hold. The local stack and the in-process
 * test dependencies start from these; anything set in the environment wins.
 */
export const LOCAL_GAS_SETTINGS = {
  X402_MIN_ORDER_USDC: String(X402_ORDER_BOUNDS.min),
  DISTRIBUTE_MIN_USDC: '0',
  DISTRIBUTE_MIN_USDT: '0',
  DISTRIBUTE_MIN_ETH_WEI: '0',
} as const;

/** The card on-ramp in use: as configured, else the sandbox in development and none elsewhere. */
export const onrampProviderOf = (config: Pick<Config, 'ONRAMP_PROVIDER' | 'APP_ENV'>) => config.ONRAMP_PROVIDER ?? (config.APP_ENV === 'development' ? 'sandbox' : 'none');

/** An empty variable counts as unset, as it does in App Service settings. */
export const withoutBlanks = (env: Record<string, string | undefined>): Record<string, string> =>
  Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));

/** A network's preset as the settings it stands for; an unknown name fills nothing (the schema names it). */
const presetSettings = (network: string | undefined): Record<string, string> => {
  if (!(CHAIN_NETWORKS as readonly string[]).includes(network ?? '')) return {};
  const preset = CHAIN_PRESETS[network as ChainNetwork];
  const settings: Record<string, string | undefined> = {
    CHAIN_ID: String(preset.chainId),
    USDC_ADDRESS: preset.usdc,
    USDT_ADDRESS: preset.usdt,
    ETH_USD_FEED_ADDRESS: preset.ethUsdFeed,
    FEED_HEARTBEAT_SECONDS: preset.feedHeartbeatSeconds?.toString(),
    CHAIN_CONFIRMATIONS: String(preset.confirmations),
    CHAIN_EXPLORER_URL: preset.explorerUrl,
  };
  return withoutBlanks(settings);
};

/** Secrets App Service resolves from Key Vault: an unresolved reference arrives as its own text. */
const SECRET_KEYS = ['JWT_SECRET', 'DATA_ENCRYPTION_KEY', 'RELAYER_PRIVATE_KEY', 'EDGE_SECRET', 'COSMOS_KEY', 'RECEIPT_SIGNING_KEY', 'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'] as const;

/** Parses the environment once; a bad value stops the process with every bad key listed. */
export const loadConfig = (env: Record<string, string | undefined> = process.env): Config => {
  const unresolved = SECRET_KEYS.filter((key) => env[key]?.startsWith('@Microsoft.KeyVault('));
  if (unresolved.length > 0) {
    throw new Error(`invalid configuration:\n  ${unresolved.map((key) => `${key}: the Key Vault reference did not resolve (check the secret and the app's access)`).join('\n  ')}`);
  }
  const given = withoutBlanks(env);
  const parsed = EnvSchema.safeParse({ ...presetSettings(given.CHAIN_NETWORK), ...given });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(env)'}: ${issue.message}`);
    throw new Error(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const config = parsed.data;
  const missing: string[] = [];
  if (config.STORE === 'cosmos' && !config.COSMOS_ENDPOINT) missing.push('COSMOS_ENDPOINT: required when STORE=cosmos');
  const chainKeys = ['CHAIN_RPC_URL', 'SPLIT_FACTORY_ADDRESS', 'RELAYER_PRIVATE_KEY'] as const;
  if (chainKeys.some((key) => config[key]) && !chainKeys.every((key) => config[key])) {
    missing.push(`${chainKeys.filter((key) => !config[key]).join(', ')}: a chain needs all of ${chainKeys.join(', ')}`);
  }
  if (config.CHAIN_RPC_URL && !config.USDC_ADDRESS && !config.USDT_ADDRESS && !config.ETH_USD_FEED_ADDRESS) {
    missing.push('USDC_ADDRESS, USDT_ADDRESS, ETH_USD_FEED_ADDRESS: a chain needs at least one way to pay');
  }
  if (config.PLATFORM_FEE_BPS + config.PARTNER_FEE_BPS >= 10_000) missing.push('PLATFORM_FEE_BPS + PARTNER_FEE_BPS: must stay below 10000');
  if (config.KEY_ISSUER === 'apim') {
    for (const key of ['AZURE_SUBSCRIPTION_ID', 'APIM_RESOURCE_GROUP', 'APIM_SERVICE_NAME'] as const) {
      if (!config[key]) missing.push(`${key}: required when KEY_ISSUER=apim`);
    }
  }
  if (onrampProviderOf(config) === 'stripe') {
    for (const key of ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'] as const) if (!config[key]) missing.push(`${key}: required when ONRAMP_PROVIDER=stripe`);
  }
  // The sandbox sends USDC from a funded key to whoever finishes its checkout: a tester's tool only.
  if (onrampProviderOf(config) === 'sandbox' && config.APP_ENV === 'production') {
    missing.push('ONRAMP_PROVIDER: sandbox only with APP_ENV=development (it sends USDC from a funded key to whoever asks); use stripe or none');
  }
  // What only the local stack and tests use: in production a local chain, a fake or a public development key would take real payments.
  if (config.APP_ENV === 'production') {
    if (config.CHAIN_NETWORK === 'local') missing.push('CHAIN_NETWORK: local (the anvil chain of npm start) only with APP_ENV=development; use base or base-sepolia');
    else if (config.CHAIN_RPC_URL && config.CHAIN_ID === LOCAL_CHAIN_ID) missing.push(`CHAIN_ID: ${LOCAL_CHAIN_ID} is the local chain's, only with APP_ENV=development (set CHAIN_NETWORK or CHAIN_ID)`);
    for (const key of ['CHAIN_RPC_URL', 'X402_FACILITATOR_URL', 'STRIPE_API_URL'] as const) {
      const url = config[key];
      if (url && isLocalRpc(url)) missing.push(`${key}: a server on this machine, only with APP_ENV=development`);
    }
    if (config.ONRAMP_SANDBOX_FUNDER_KEY) missing.push("ONRAMP_SANDBOX_FUNDER_KEY: the sandbox's development key, only with APP_ENV=development");
  }
  if (config.APP_ENV === 'production' && !config.DATA_ENCRYPTION_KEY) missing.push('DATA_ENCRYPTION_KEY: required when APP_ENV=production');
  if (config.APP_ENV === 'production' && !config.JWT_SECRET) missing.push('JWT_SECRET: required when APP_ENV=production');
  if (missing.length) throw new Error(`invalid configuration:\n  ${missing.join('\n  ')}`);
  return { ...config, APP_VERSION };
};
