import type { AppDeps, Settings } from './app/deps';
import { connectCosmos, ensureCosmosContainers, type CosmosStore } from './adapters/cosmos/client';
import { CosmosInventoryRepository } from './adapters/cosmos/inventory';
import { CosmosMerchantRepository } from './adapters/cosmos/merchants';
import { CosmosSubscriptionRepository } from './adapters/cosmos/subscriptions';
import { MemoryInventoryRepository } from './adapters/memory/inventory';
import { MemoryMerchantRepository } from './adapters/memory/merchants';
import { MemoryRateLimiter } from './adapters/memory/rate-limiter';
import { alwaysUp } from './adapters/memory/probe';
import { randomIds, systemClock } from './adapters/system/runtime';
import { MemorySubscriptionRepository } from './adapters/memory/subscriptions';
import { connectQueues, ensureQueues, type QueueStore } from './adapters/storage-queue/client';
import { createHash } from 'node:crypto';
import { LOCAL_GAS_SETTINGS, loadConfig, type Config } from './config';
import { CosmosDeliveryLog } from './adapters/cosmos/deliveries';
import { CosmosReceiptRepository } from './adapters/cosmos/receipts';
import { aesGcmSecretBox } from './adapters/crypto/secret-box';
import { httpWebhookSender } from './adapters/http/webhook-sender';
import { MemoryDeliveryLog, MemoryEventQueue } from './adapters/memory/deliveries';
import { MemoryReceiptRepository } from './adapters/memory/receipts';
import { storageEventQueue } from './adapters/storage-queue/event-queue';
import { appInsightsMetrics, logMetrics } from './adapters/http/app-insights-metrics';
import { CosmosCollection } from './adapters/cosmos/documents';
import type { EvmChain } from './adapters/evm/chain';
import type { ChainExpectations } from './adapters/evm/chain-check';
import { lazyAzureCredential } from './adapters/azure/credential';
import type { Chain } from './ports/chain';
import type { KeyIssuer } from './ports/key-issuer';
import { localKeyIssuer } from './adapters/apim/local-key-issuer';
import { hs256SessionTokens } from './adapters/jwt/session-tokens';
import { MemoryCollection } from './adapters/memory/documents';
import { siweVerifier } from './adapters/siwe/verifier';
import { unavailableSettler } from './adapters/x402/unavailable-settler';
import { sandboxOnramp } from './adapters/onramp/sandbox';
import type { PaymentSettler } from './ports/payment-settler';
import type { X402Protocol } from './ports/x402-protocol';
import { containers } from './registry';
import { ZERO_ADDRESS } from './domain/payment';
import { lazyReceiptSigner, unavailableReceiptSigner } from './adapters/evm/lazy-receipt-signer';
import { onrampProviderOf } from './config';
import type { OnrampProvider } from './ports/onramp';

export const settingsFrom = (config: Config): Settings => ({
  version: config.APP_VERSION,
  baseUrl: config.BASE_URL,
  planQuotas: config.PLAN_QUOTAS,
  edgeSecret: config.EDGE_SECRET,
  subscriptionCacheMs: config.SUBSCRIPTION_CACHE_MS,
  keylessRateLimitPerMinute: config.KEYLESS_RATE_LIMIT_PER_MINUTE,
  x402RateLimitPerMinute: config.X402_RATE_LIMIT_PER_MINUTE,
  portalRateLimitPerMinute: config.PORTAL_RATE_LIMIT_PER_MINUTE,
  frameAncestors: config.FRAME_ANCESTORS,
  splitDeployDailyBudget: config.SPLIT_DEPLOY_DAILY_BUDGET,
  relayer: {
    settlementsPerDay: config.SETTLEMENT_DAILY_BUDGET,
    distributionsPerDay: config.DISTRIBUTION_DAILY_BUDGET,
    sweepsPerDay: config.SWEEP_DAILY_BUDGET,
    x402MinOrder: config.X402_MIN_ORDER_USDC,
    distributeMin: { USDC: config.DISTRIBUTE_MIN_USDC, USDT: config.DISTRIBUTE_MIN_USDT, ETH: config.DISTRIBUTE_MIN_ETH_WEI },
  },
  siweDomain: config.SIWE_DOMAIN ?? new URL(config.BASE_URL).host,
  chainId: config.CHAIN_ID,
  adminWallets: config.ADMIN_WALLETS,
  development: config.APP_ENV === 'development',
  brandKey: config.BRAND_KEY,
  brandName: config.BRAND_NAME,
  platformWallet: config.PLATFORM_WALLET,
  defaultPricing: { platformFeeBps: config.PLATFORM_FEE_BPS, partnerFeeBps: config.PARTNER_FEE_BPS, partnerWallet: config.PARTNER_WALLET ?? null },
  webhookHeaderPrefix: config.WEBHOOK_HEADER_PREFIX,
  retiredReceiptSigners: config.RECEIPT_SIGNERS_RETIRED,
  tokens: [
    ...(config.USDC_ADDRESS ? [{ symbol: 'USDC' as const, address: config.USDC_ADDRESS, decimals: 6 }] : []),
    ...(config.USDT_ADDRESS ? [{ symbol: 'USDT' as const, address: config.USDT_ADDRESS, decimals: 6 }] : []),
    ...(config.ETH_USD_FEED_ADDRESS ? [{ symbol: 'ETH' as const, address: ZERO_ADDRESS, decimals: 18 }] : []),
  ],
  payments: {
    confirmations: config.CHAIN_CONFIRMATIONS,
    explorerUrl: config.CHAIN_EXPLORER_URL ?? null,
    ethUsdFeed: config.ETH_USD_FEED_ADDRESS ?? null,
    feedHeartbeatMs: config.FEED_HEARTBEAT_SECONDS * 1000,
    slippageBps: config.PAYMENT_SLIPPAGE_BPS,
    quoteLockMs: config.QUOTE_LOCK_SECONDS * 1000,
    receiptExpiryMs: config.RECEIPT_EXPIRY_SECONDS * 1000,
    watchBlockRange: config.WATCH_BLOCK_RANGE,
  },
});

/** Development falls back to fixed secrets so the local stack needs no setup; production refuses to start without them. */
const DEVELOPMENT_JWT_SECRET = 'development-only-session-secret-not-for-production-use';
const DEVELOPMENT_DATA_KEY = createHash('sha256').update('development-only-data-encryption-key').digest();
/** Signs receipt proofs in development without a key of its own (and in tests): public, so worthless elsewhere. */
export const DEVELOPMENT_RECEIPT_SIGNING_KEY = `0x${createHash('sha256').update('development-only-receipt-signing-key').digest('hex')}`;

/** The receipt-signing key: RECEIPT_SIGNING_KEY, else development's fixed key; elsewhere without it, proofs answer 503. */
const receiptSignerFrom = (config: Config) => {
  const key = config.RECEIPT_SIGNING_KEY ?? (config.APP_ENV === 'development' ? DEVELOPMENT_RECEIPT_SIGNING_KEY : undefined);
  return key ? lazyReceiptSigner(key) : unavailableReceiptSigner('receipt proofs are not configured on this deployment: set RECEIPT_SIGNING_KEY');
};

/**
 * The chain, where one is configured (RPC, split factory and relayer key). The EVM adapter (ethers)
 * loads on the first chain call, so a cold start of the app does not pay for it.
 */
const chainFrom = (config: Config): (Chain & { destroy(): void }) | undefined => {
  if (!config.CHAIN_RPC_URL || !config.SPLIT_FACTORY_ADDRESS || !config.RELAYER_PRIVATE_KEY) return undefined;
  const options = {
    rpcUrl: config.CHAIN_RPC_URL,
    chainId: config.CHAIN_ID,
    relayerPrivateKey: config.RELAYER_PRIVATE_KEY,
    splitFactory: config.SPLIT_FACTORY_ADDRESS,
    tokens: [config.USDC_ADDRESS, config.USDT_ADDRESS].filter((token): token is string => Boolean(token)),
    ethUsdFeed: config.ETH_USD_FEED_ADDRESS,
    depositFactory: config.DEPOSIT_FACTORY_ADDRESS,
  };
  let chain: Promise<EvmChain> | undefined;
  const load = () => (chain ??= import('./adapters/evm/chain').then(({ EvmChain }) => new EvmChain(options)));
  return {
    chainId: config.CHAIN_ID,
    deploySplit: async (payees) => (await load()).deploySplit(payees),
    splitFactory: config.SPLIT_FACTORY_ADDRESS,
    readSplit: async (address) => (await load()).readSplit(address),
    findSplit: async (payees) => (await load()).findSplit(payees),
    splitTransfers: async (address, range) => (await load()).splitTransfers(address, range),
    blockNumber: async () => (await load()).blockNumber(),
    blockTimestamp: async (blockNumber) => (await load()).blockTimestamp(blockNumber),
    relayerBalance: async () => (await load()).relayerBalance(),
    transaction: async (hash) => (await load()).transaction(hash),
    depositAddress: async (split, wallet, receiptId) => (await load()).depositAddress(split, wallet, receiptId),
    paymentsInto: async (addresses, range) => (await load()).paymentsInto(addresses, range),
    tokenTransfersInto: async (addresses, range) => (await load()).tokenTransfersInto(addresses, range),
    ethTransfersTo: async (addresses, range) => (await load()).ethTransfersTo(addresses, range),
    transfersAmong: async (senders, recipients, range) => (await load()).transfersAmong(senders, recipients, range),
    ethUsdPrice: async () => (await load()).ethUsdPrice(),
    distribute: async (split, token) => (await load()).distribute(split, token),
    sweepDeposits: async (deposits) => (await load()).sweepDeposits(deposits),
    sweepCall: async (deposits) => (await load()).sweepCall(deposits),
    balancesOf: async (holders, tokens, blockTag) => (await load()).balancesOf(holders, tokens, blockTag),
    splitHoldings: async (split, payee, tokens, blockTag) => (await load()).splitHoldings(split, payee, tokens, blockTag),
    firstBlockAtOrAfter: async (timestampMs) => (await load()).firstBlockAtOrAfter(timestampMs),
    destroy: () => void chain?.then((loaded) => loaded.destroy()),
  };
};

/** What the configuration says is on its chain, for the startup check; undefined where no chain is configured. */
const chainExpectations = (config: Config): ChainExpectations | undefined => {
  if (!config.CHAIN_RPC_URL) return undefined;
  const named = (setting: string, address: string | undefined) => (address ? [{ setting, address }] : []);
  return {
    rpcUrl: config.CHAIN_RPC_URL,
    chainId: config.CHAIN_ID,
    // The decimals the service prices each token in: the settings' own, so the two cannot differ.
    tokens: settingsFrom(config)
      .tokens.filter((token) => token.symbol !== 'ETH')
      .map((token) => ({ setting: `${token.symbol}_ADDRESS`, address: token.address, symbol: token.symbol, decimals: token.decimals })),
    feeds: named('ETH_USD_FEED_ADDRESS', config.ETH_USD_FEED_ADDRESS).map((feed) => ({ ...feed, description: 'ETH / USD' })),
    contracts: [...named('SPLIT_FACTORY_ADDRESS', config.SPLIT_FACTORY_ADDRESS), ...named('DEPOSIT_FACTORY_ADDRESS', config.DEPOSIT_FACTORY_ADDRESS)],
  };
};

/**
 * Before the app serves: the node at CHAIN_RPC_URL serves CHAIN_ID, and every configured token, feed
 * and factory is there as configured. One error lists every mismatch; nothing is read where no chain
 * is configured; a node that does not answer is logged, not a refusal to start.
 */
export const checkChain = async (config: Config, log: (line: string) => void = console.warn): Promise<void> => {
  const expected = chainExpectations(config);
  if (!expected) return;
  const { chainMismatches, ChainUnansweredError } = await import('./adapters/evm/chain-check');
  let problems: string[];
  try {
    problems = await chainMismatches(expected);
  } catch (error) {
    // A chain outage at start is not a wrong configuration: the app starts, its portal, pages and
    // merchant API answer, and the calls that need the chain answer 503 until the node does.
    if (!(error instanceof ChainUnansweredError)) throw error;
    log(`the chain was not checked at start: ${error.message}; the calls that need it answer 503 until it answers`);
    return;
  }
  if (problems.length) throw new Error(`the chain does not match the configuration:\n  ${problems.join('\n  ')}`);
};

/** The Functions host's start: the configuration (every bad variable listed), then its chain. */
export const checkAtStart = async (env: Record<string, string | undefined> = process.env): Promise<void> => checkChain(loadConfig(env));

/** API Management's key issuer, loaded when a key is first created or revoked (its SDK is the largest module of the app). */
const apimKeyIssuer = (config: Config): KeyIssuer => {
  let issuer: Promise<KeyIssuer> | undefined;
  const load = () =>
    (issuer ??= import('./adapters/apim/key-issuer').then(
      ({ ApimKeyIssuer }) =>
        new ApimKeyIssuer({
          credential: lazyAzureCredential(),
          subscriptionId: config.AZURE_SUBSCRIPTION_ID!,
          resourceGroup: config.APIM_RESOURCE_GROUP!,
          serviceName: config.APIM_SERVICE_NAME!,
        }),
    ));
  return { issue: async (input) => (await load()).issue(input), revoke: async (id) => (await load()).revoke(id) };
};

/** Encrypts API keys at rest; the keys CLI uses it too, so its keys can sign webhooks. */
export const secretBoxFrom = (config: Config) =>
  aesGcmSecretBox(config.DATA_ENCRYPTION_KEY ? Buffer.from(config.DATA_ENCRYPTION_KEY, 'base64') : DEVELOPMENT_DATA_KEY);

const metricsFrom = (config: Config) =>
  config.APPLICATIONINSIGHTS_CONNECTION_STRING ? appInsightsMetrics(config.APPLICATIONINSIGHTS_CONNECTION_STRING, lazyAzureCredential()) : logMetrics();

const queueDepthOf = (queues: QueueStore | undefined) => async (queue: string) =>
  queues ? ((await queues.queue(queue).getProperties()).approximateMessagesCount ?? 0) : 0;

const authAdapters = (config: Config) => ({
  metrics: metricsFrom(config),
  secretBox: secretBoxFrom(config),
  webhookSender: httpWebhookSender({ development: config.APP_ENV === 'development' }),
  sessionTokens: hs256SessionTokens(config.JWT_SECRET ?? DEVELOPMENT_JWT_SECRET, systemClock),
  signIn: siweVerifier,
  keyIssuer: config.KEY_ISSUER === 'apim' ? apimKeyIssuer(config) : localKeyIssuer(randomIds),
  receiptSigner: receiptSignerFrom(config),
});

/**
 * x402: the protocol's encodings and reads, and what settles payments — a remote facilitator when
 * X402_FACILITATOR_URL is set, else the relayer in process on the configured chain. The protocol's
 * packages (and viem) load on the first x402 call, so no other route's cold start pays for them.
 */
const x402Adapters = (config: Config): Pick<AppDeps, 'settler' | 'x402'> => {
  const endpoint = config.CHAIN_RPC_URL ? { rpcUrl: config.CHAIN_RPC_URL, chainId: config.CHAIN_ID } : undefined;
  let protocol: Promise<X402Protocol> | undefined;
  const wire = () => (protocol ??= import('./adapters/x402/protocol').then(({ x402Protocol }) => x402Protocol(endpoint)));
  const x402: X402Protocol = {
    v1Network: async (chainId) => (await wire()).v1Network(chainId),
    encodePaymentRequired: async (challenge) => (await wire()).encodePaymentRequired(challenge),
    encodePaymentResponse: async (settlement) => (await wire()).encodePaymentResponse(settlement),
    decodePayment: async (header) => (await wire()).decodePayment(header),
    tokenDomain: async (token) => (await wire()).tokenDomain(token),
    authorizationOutcome: async (token, terms, hint) => (await wire()).authorizationOutcome(token, terms, hint),
    parseSignInWithX: async (header) => (await wire()).parseSignInWithX(header),
    verifySignInWithX: async (proof) => (await wire()).verifySignInWithX(proof),
    signInWithXSchema: async () => (await wire()).signInWithXSchema(),
  };

  const facilitatorUrl = config.X402_FACILITATOR_URL;
  const relayerKey = config.RELAYER_PRIVATE_KEY;
  let loaded: Promise<PaymentSettler> | undefined;
  const load = facilitatorUrl
    ? () => (loaded ??= import('./adapters/x402/http-settler').then(({ httpSettler }) => httpSettler(facilitatorUrl)))
    : endpoint && relayerKey
      ? () => (loaded ??= import('./adapters/x402/in-process-settler').then(({ inProcessSettler }) => inProcessSettler({ ...endpoint, relayerPrivateKey: relayerKey })))
      : undefined;
  const settler: PaymentSettler = load
    ? { verify: async (payload, requirements) => (await load()).verify(payload, requirements), settle: async (payload, requirements) => (await load()).settle(payload, requirements) }
    : unavailableSettler('x402 payments cannot settle here: set X402_FACILITATOR_URL, or a chain (CHAIN_RPC_URL, RELAYER_PRIVATE_KEY) for the relayer to settle them');
  return { settler, x402 };
};

/** Development's sandbox webhook secret, so the local stack needs no setup. */
const DEVELOPMENT_SANDBOX_SECRET = 'development-only-sandbox-onramp-secret';

/** Stripe's SDK takes another API origin (a local fake) as host, port and protocol. */
const stripeConnection = (options: { secretKey: string; webhookSecret: string; apiUrl: string | undefined }) => {
  const url = options.apiUrl ? new URL(options.apiUrl) : undefined;
  const protocol = url?.protocol === 'http:' ? ('http' as const) : ('https' as const);
  return {
    secretKey: options.secretKey,
    webhookSecret: options.webhookSecret,
    ...(url && { host: url.hostname, port: Number(url.port || (protocol === 'http' ? 80 : 443)), protocol }),
  };
};

/**
 * The card on-ramp named by ONRAMP_PROVIDER. Stripe's SDK loads on its first call; the sandbox is
 * small and in process (its page and desk are this service's own routes).
 */
const onrampAdapters = (config: Config): Pick<AppDeps, 'onramp' | 'onrampSandbox'> => {
  const provider = onrampProviderOf(config);
  if (provider === 'sandbox') {
    const { provider: onramp, desk } = sandboxOnramp({
      baseUrl: config.BASE_URL,
      secret: config.ONRAMP_SANDBOX_SECRET ?? DEVELOPMENT_SANDBOX_SECRET,
      funderKey: config.ONRAMP_SANDBOX_FUNDER_KEY,
      chain: config.CHAIN_RPC_URL ? { rpcUrl: config.CHAIN_RPC_URL, chainId: config.CHAIN_ID } : undefined,
    });
    return { onramp, onrampSandbox: desk };
  }
  if (provider === 'stripe') {
    const options = { secretKey: config.STRIPE_SECRET_KEY!, webhookSecret: config.STRIPE_WEBHOOK_SECRET!, apiUrl: config.STRIPE_API_URL };
    let loaded: Promise<OnrampProvider> | undefined;
    const load = () => (loaded ??= import('./adapters/onramp/stripe').then(({ stripeOnramp }) => stripeOnramp(stripeConnection(options))));
    const onramp: OnrampProvider = {
      name: 'stripe',
      createSession: async (request) => (await load()).createSession(request),
      readWebhook: async (rawBody, headers, now) => (await load()).readWebhook(rawBody, headers, now),
    };
    return { onramp, onrampSandbox: undefined };
  }
  return { onramp: undefined, onrampSandbox: undefined };
};

const downProbe = (what: string) => ({
  ping: async () => {
    throw new Error(`${what} is not configured`);
  },
});

/** An in-process adapter set: unit tests and `STORE=memory`. */
const memoryConfig = () => loadConfig({ STORE: 'memory', APP_ENV: 'development', ...LOCAL_GAS_SETTINGS });

export const memoryDeps = (overrides: Partial<AppDeps> = {}): AppDeps => ({
  settings: settingsFrom(memoryConfig()),
  ...authAdapters(memoryConfig()),
  ...x402Adapters(memoryConfig()),
  onramp: undefined,
  onrampSandbox: undefined,
  chain: undefined,
  queueDepth: async () => 0,
  metrics: logMetrics(),
  claims: new MemoryCollection(),
  sessions: new MemoryCollection(),
  merchants: new MemoryMerchantRepository(),
  receipts: new MemoryReceiptRepository(),
  deliveries: new MemoryDeliveryLog(),
  queue: new MemoryEventQueue(),
  platform: new MemoryCollection(),
  chainState: new MemoryCollection(),
  clock: systemClock,
  ids: randomIds,
  inventory: new MemoryInventoryRepository(),
  subscriptions: new MemorySubscriptionRepository(),
  rateLimiter: new MemoryRateLimiter(),
  probes: { store: alwaysUp, queue: alwaysUp },
  ...overrides,
});

export interface Composition {
  deps: AppDeps;
  cosmos?: CosmosStore;
  queues?: QueueStore;
  /** Creates containers and queues where `STORE_AUTO_CREATE` is true; a no-op otherwise. */
  prepare(): Promise<void>;
  dispose(): void;
}

/** Builds the adapters named by configuration. */
export const compose = (config: Config): Composition => {
  const queueServiceUri =
    config.AzureWebJobsStorage__queueServiceUri ??
    (config.AzureWebJobsStorage__accountName && `https://${config.AzureWebJobsStorage__accountName}.queue.core.windows.net`);
  const queues = config.AzureWebJobsStorage
    ? connectQueues(config.AzureWebJobsStorage)
    : queueServiceUri
      ? connectQueues({ queueServiceUri })
      : undefined;
  const queueProbe = queues?.probe ?? downProbe('AzureWebJobsStorage');
  if (config.STORE === 'memory') {
    const deps = memoryDeps({
      settings: settingsFrom(config),
      ...authAdapters(config),
      ...x402Adapters(config),
      ...onrampAdapters(config),
      chain: chainFrom(config),
      ...(queues && { queue: storageEventQueue(queues), queueDepth: queueDepthOf(queues) }),
      probes: { store: alwaysUp, queue: queueProbe },
    });
    return {
      deps,
      queues,
      prepare: async () => {
        if (config.STORE_AUTO_CREATE && queues) await ensureQueues(queues);
      },
      dispose: () => {},
    };
  }
  const cosmos = connectCosmos({
    endpoint: config.COSMOS_ENDPOINT!,
    key: config.COSMOS_KEY,
    database: config.COSMOS_DATABASE,
    requestTimeoutMs: config.COSMOS_TIMEOUT_MS,
  });
  const chain = chainFrom(config);
  const deps: AppDeps = {
    settings: settingsFrom(config),
    clock: systemClock,
    ids: randomIds,
    ...authAdapters(config),
    ...x402Adapters(config),
    ...onrampAdapters(config),
    chain,
    inventory: new CosmosInventoryRepository(cosmos),
    subscriptions: new CosmosSubscriptionRepository(cosmos),
    claims: new CosmosCollection(cosmos, containers.claims),
    sessions: new CosmosCollection(cosmos, containers.sessions),
    merchants: new CosmosMerchantRepository(cosmos),
    receipts: new CosmosReceiptRepository(cosmos),
    deliveries: new CosmosDeliveryLog(cosmos),
    queue: queues ? storageEventQueue(queues) : new MemoryEventQueue(),
    queueDepth: queueDepthOf(queues),
    platform: new CosmosCollection(cosmos, containers.platform),
    chainState: new CosmosCollection(cosmos, containers.chainState),
    rateLimiter: new MemoryRateLimiter(),
    probes: { store: cosmos.probe, queue: queueProbe },
  };
  return {
    deps,
    cosmos,
    queues,
    prepare: async () => {
      if (!config.STORE_AUTO_CREATE) return;
      await ensureCosmosContainers(cosmos);
      if (queues) await ensureQueues(queues);
    },
    dispose: () => {
      cosmos.dispose();
      chain?.destroy();
    },
  };
};

let current: AppDeps | undefined;

/** The process's dependencies: built from the environment on first use, unless set first. */
export const getDeps = (): AppDeps => (current ??= compose(loadConfig()).deps);

/** Installs the dependencies every function uses (the local host, tests). */
export const setDeps = (deps: AppDeps): void => {
  current = deps;
};
