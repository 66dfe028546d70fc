/**
 * The local stack: the embedded Cosmos protocol server and Azurite (unless COSMOS_ENDPOINT /
 * AzureWebJobsStorage point elsewhere), the store restored from the data folder, the function
 * handlers on the local host, and a seeded demo merchant.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import './functions';
import { createApiKey, findSubscriptionByKey } from '../../shared/app/api-keys';
import type { AppDeps } from '../../shared/app/deps';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { refreshDirectoryFields } from '../../shared/app/directory';
import { loadMerchant } from '../../shared/app/merchants';
import { updateShopConfig } from '../../shared/app/shop-config';
import { deploySplit } from '../../shared/app/splits';
import { ShopConfigUpdate } from '../../shared/domain/shop';
import { checkChain, compose } from '../../shared/composition';
import { setDeps } from '../../shared/composition';
import { LOCAL_GAS_SETTINGS, loadConfig, withoutBlanks } from '../../shared/config';
import { InventoryListQuery, InventoryUpsertInput } from '../../shared/domain/inventory';
import { scopes } from '../../shared/domain/subscription';
import { httpFunctions } from '../../shared/http/function';
import { allRoutes } from '../../shared/http/routes';
import { deployLocalContracts } from './deploy-contracts';
import { readEthUsdPrice, setEthUsdPrice } from './feed';
import { ANVIL_ACCOUNTS, ANVIL_BUYERS, ANVIL_ONRAMP_SANDBOX, ANVIL_RELAYER, type RunningAnvil } from './anvil';
import { startSavedChain } from './chain-state';
import { createLocalHost } from './host';
import { startTriggers } from './triggers';
import { restoreStore, saveStore } from './persist';
import { localReceiptSigningKey } from './signing-key';
import { freePort, LOCAL_COSMOS_KEY, startCosmosServer, startQueueServer, type CosmosServer, type QueueServer } from './servers';

/** anvil's well-known development account #1: the demo merchant (its key is public, for local use only). */
export const DEMO_MERCHANT = ANVIL_ACCOUNTS[1];
export const DEMO_WALLET = DEMO_MERCHANT.address;
/** Account #3: the local platform's payout wallet and platform admin. */
export const LOCAL_PLATFORM = ANVIL_ACCOUNTS[3];
const SAVE_EVERY_MS = 3_000;
const CHAIN_SAVE_EVERY_MS = 5_000;

const demoItems = [
  { sku: 'COFFEE-BEANS-1KG', name: 'Single-origin coffee beans, 1 kg', priceUsd: 24.5, stockQty: 40, category: 'coffee', tags: ['beans', 'organic'] },
  { sku: 'MUG-CERAMIC', name: 'Ceramic mug', priceUsd: 12, stockQty: 120, category: 'merch', tags: ['mug'] },
  { sku: 'GIFT-CARD-25', name: 'Gift card, 25 USD', priceUsd: 25, category: 'gift', taxable: false, tags: ['gift'] },
  { sku: 'ESPRESSO-CLASS', name: 'Espresso class (2 h)', priceUsd: 49.99, stockQty: 0, category: 'classes', tags: ['class', 'workshop'] },
];

const demoShop = {
  branding: { name: 'Demo Coffee Roasters', description: 'Single-origin beans, roasted to order.' },
  taxDefaults: { jurisdictions: [{ code: 'US-CA', name: 'California', rate: 0.0725 }], defaultJurisdictionCode: 'US-CA' },
  processingFeePct: 1.5,
  directory: { slug: 'demo-coffee', categories: ['coffee'], keywords: ['beans', 'espresso', 'mugs'], industryPack: 'retail', listed: true },
};

export interface StackFiles {
  dataDir: string;
  store: string;
  queues: string;
  chain: string;
  credentials: string;
  /** Where a running stack says how to reach it (the keys CLI reads this). */
  running: string;
  /** The receipt-signing key made on the first start (owner-only). */
  receiptSigningKey: string;
}

export const stackFiles = (dataDir = process.env.DATA_DIR ?? '.data'): StackFiles => {
  const dir = resolve(dataDir);
  return {
    dataDir: dir,
    store: join(dir, 'store.json'),
    queues: join(dir, 'queues'),
    chain: join(dir, 'chain-state.json'),
    credentials: join(dir, 'local-credentials.json'),
    running: join(dir, 'stack.json'),
    receiptSigningKey: join(dir, 'receipt-signing-key.json'),
  };
};

export interface RunningStackInfo {
  pid: number;
  baseUrl: string;
  cosmosEndpoint: string;
  cosmosKey: string;
  database: string;
  chainRpcUrl: string;
}

/** `.data/local-credentials.json`: how to reach the stack, its demo shop and its chain. */
export interface Credentials {
  baseUrl: string;
  apiKey: string;
  wallet: string;
  /** The demo shop's directory slug. */
  shopSlug: string | null;
  rpcUrl: string | null;
  chainId: number;
  tokens: { USDC: string | null; USDT: string | null };
  ethUsdFeed: string | null;
  /** anvil accounts 5–9, funded with test USDC and USDT (none on a chain the stack did not start). */
  buyers: string[];
}

/** A credentials file as read back: one written before the chain fields lacks them. */
export type SavedCredentials = Pick<Credentials, 'baseUrl' | 'apiKey' | 'wallet'> & Partial<Credentials>;

export interface LocalStack {
  credentials: Credentials;
  deps: AppDeps;
  stop(): Promise<void>;
}

const writeJson = (file: string, value: unknown) => writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);

/** Reuses the saved demo key while it is still valid; otherwise makes the demo merchant anew. */
const seedDemo = async (deps: AppDeps, files: StackFiles): Promise<string> => {
  if (existsSync(files.credentials)) {
    const saved = JSON.parse(readFileSync(files.credentials, 'utf8')) as SavedCredentials;
    if (await findSubscriptionByKey(deps, saved.apiKey)) return saved.apiKey;
  }
  const { apiKey } = await createApiKey(deps, { wallet: DEMO_WALLET, scopes: [...scopes], plan: 'development', brand: deps.settings.brandKey });
  const { total } = await deps.inventory.list(DEMO_WALLET, InventoryListQuery.parse({ limit: '1' }));
  if (total === 0) {
    for (const item of demoItems) await upsertInventoryItem(deps, DEMO_WALLET, InventoryUpsertInput.parse(item));
  }
  return apiKey;
};

/** The demo shop is ready to take orders: a deployed split, California tax, a listing. Answers its slug. */
const setUpDemoShop = async (deps: AppDeps): Promise<string | null> => {
  const merchant = await loadMerchant(deps, DEMO_WALLET);
  if (!merchant.split && deps.chain && deps.settings.platformWallet) await deploySplit(deps, DEMO_WALLET);
  if (merchant.shop.updatedAt !== null) {
    // A store saved before the directory fields existed: written again, so the demo shop is listed.
    await refreshDirectoryFields(deps, DEMO_WALLET);
    return merchant.shop.directory.slug;
  }
  return (await updateShopConfig(deps, DEMO_WALLET, ShopConfigUpdate.parse(demoShop))).config.directory.slug;
};

/** The stack already running from this data folder, if any (its pid is alive). */
export const runningStack = (files: StackFiles): RunningStackInfo | undefined => {
  if (!existsSync(files.running)) return undefined;
  const info = JSON.parse(readFileSync(files.running, 'utf8')) as RunningStackInfo;
  try {
    process.kill(info.pid, 0);
    return info;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? info : undefined;
  }
};

/** The credentials of the stack running from this data folder, for the scripts that drive it. */
export const runningCredentials = (files: StackFiles = stackFiles()): SavedCredentials => {
  if (!runningStack(files)) throw new Error(`no local stack runs from ${files.dataDir}: start one with npm start`);
  return JSON.parse(readFileSync(files.credentials, 'utf8')) as SavedCredentials;
};

/**
 * A chain restored from an earlier run keeps its feed's last update time, which a break of an hour
 * makes stale (ETH quotes are then refused): the local feed gets its own last answer again, updated
 * now. Only the local mock feed; `npm run price` sets another price.
 */
const refreshStalePrice = async (rpcUrl: string, feed: string, log: (line: string) => void) => {
  const current = await readEthUsdPrice(rpcUrl, feed);
  if (Date.now() / 1000 - current.updatedAt < LOCAL_PRICE_REFRESH_AFTER_S) return;
  await setEthUsdPrice(rpcUrl, feed, current.usd);
  log(`the local ETH/USD price (${current.usd}) was older than ${LOCAL_PRICE_REFRESH_AFTER_S / 60} minutes: set again`);
};
const LOCAL_PRICE_REFRESH_AFTER_S = 30 * 60;

export const startLocalStack = async (env: Record<string, string | undefined> = process.env, log = console.log): Promise<LocalStack> => {
  const files = stackFiles(env.DATA_DIR);
  const other = runningStack(files);
  if (other) throw new Error(`a stack from ${files.dataDir} already runs (pid ${other.pid}, ${other.baseUrl}); stop it first`);
  mkdirSync(files.dataDir, { recursive: true });
  const port = env.PORT && env.PORT !== '0' ? Number(env.PORT) : env.PORT === '0' ? await freePort() : 7071;
  const settings: Record<string, string | undefined> = {
    APP_ENV: 'development',
    STORE_AUTO_CREATE: 'true',
    BASE_URL: `http://localhost:${port}`,
    // Small orders, and every split distributed within a minute (set these to try the production rules).
    ...LOCAL_GAS_SETTINGS,
    ...withoutBlanks(env),
  };

  // Without CHAIN_RPC_URL the stack runs anvil, which is the local network and no other.
  if (!settings.CHAIN_RPC_URL && (settings.CHAIN_NETWORK ?? 'local') !== 'local') {
    throw new Error(`CHAIN_NETWORK=${settings.CHAIN_NETWORK} needs CHAIN_RPC_URL: the stack runs a chain of its own for local only`);
  }

  let cosmosServer: CosmosServer | undefined;
  let queueServer: QueueServer | undefined;
  if (settings.STORE !== 'memory' && !settings.COSMOS_ENDPOINT) {
    cosmosServer = await startCosmosServer();
    settings.COSMOS_ENDPOINT = cosmosServer.url;
    settings.COSMOS_KEY = LOCAL_COSMOS_KEY;
  }
  if (!settings.AzureWebJobsStorage) {
    queueServer = await startQueueServer({ location: files.queues });
    settings.AzureWebJobsStorage = queueServer.connectionString;
  }
  let anvil: RunningAnvil | undefined;
  if (!settings.CHAIN_RPC_URL) {
    // The chain is saved beside the store (on close and every few seconds), so split addresses stay
    // valid; a store kept nowhere, or not saved yet, names nothing a fresh chain could contradict.
    const storeIsFresh = settings.STORE === 'memory' || (cosmosServer !== undefined && !existsSync(files.store));
    anvil = await startSavedChain({ file: files.chain, saveEveryMs: CHAIN_SAVE_EVERY_MS, storeIsFresh, log });
    const contracts = await deployLocalContracts(anvil.rpcUrl, ANVIL_RELAYER.privateKey);
    await refreshStalePrice(anvil.rpcUrl, contracts.ethUsdFeed, log);
    Object.assign(settings, {
      // The local preset: anvil's chain id, one confirmation (anvil mines a block per transaction), no explorer.
      CHAIN_NETWORK: 'local',
      CHAIN_RPC_URL: anvil.rpcUrl,
      RELAYER_PRIVATE_KEY: settings.RELAYER_PRIVATE_KEY ?? ANVIL_RELAYER.privateKey,
      USDC_ADDRESS: contracts.usdc,
      USDT_ADDRESS: contracts.usdt,
      SPLIT_FACTORY_ADDRESS: contracts.splitFactory,
      DEPOSIT_FACTORY_ADDRESS: contracts.depositFactory,
      ETH_USD_FEED_ADDRESS: contracts.ethUsdFeed,
      ONRAMP_SANDBOX_FUNDER_KEY: settings.ONRAMP_SANDBOX_FUNDER_KEY ?? ANVIL_ONRAMP_SANDBOX.privateKey,
      PLATFORM_WALLET: settings.PLATFORM_WALLET ?? LOCAL_PLATFORM.address,
      ADMIN_WALLETS: settings.ADMIN_WALLETS ?? LOCAL_PLATFORM.address,
    });
  }
  // Proofs are signed with this folder's own key, unless one is given.
  settings.RECEIPT_SIGNING_KEY ??= localReceiptSigningKey(files.receiptSigningKey);
  const config = loadConfig(settings);
  await checkChain(config);
  const composition = compose(config);
  if (cosmosServer && composition.cosmos) {
    const restored = await restoreStore(composition.cosmos, files.store);
    if (restored) log(`restored ${restored} documents from ${files.store}`);
  }
  await composition.prepare();
  setDeps(composition.deps);

  const server: Server = createLocalHost({ deps: composition.deps, routes: allRoutes, functions: httpFunctions, log });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolveListen());
  });

  const triggers = composition.queues ? startTriggers(composition.queues, log) : undefined;
  const apiKey = await seedDemo(composition.deps, files);
  const shopSlug = await setUpDemoShop(composition.deps);
  const credentials: Credentials = {
    baseUrl: config.BASE_URL,
    apiKey,
    wallet: DEMO_WALLET,
    shopSlug,
    rpcUrl: config.CHAIN_RPC_URL ?? null,
    chainId: config.CHAIN_ID,
    tokens: { USDC: config.USDC_ADDRESS ?? null, USDT: config.USDT_ADDRESS ?? null },
    ethUsdFeed: config.ETH_USD_FEED_ADDRESS ?? null,
    buyers: anvil ? ANVIL_BUYERS.map((buyer) => buyer.address) : [],
  };
  writeJson(files.credentials, credentials);
  const info: RunningStackInfo = {
    pid: process.pid,
    baseUrl: config.BASE_URL,
    cosmosEndpoint: config.COSMOS_ENDPOINT ?? '',
    cosmosKey: config.COSMOS_KEY ?? '',
    database: config.COSMOS_DATABASE,
    chainRpcUrl: config.CHAIN_RPC_URL ?? '',
  };
  writeJson(files.running, info);

  const save = async () => {
    if (cosmosServer?.takeDirty() && composition.cosmos) await saveStore(composition.cosmos, files.store);
  };
  let saving = Promise.resolve();
  const saver = setInterval(() => {
    saving = saving.then(save).catch((error: unknown) => log(`saving the store failed: ${String(error)}`));
  }, SAVE_EVERY_MS);
  saver.unref();

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      clearInterval(saver);
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
      await triggers?.stop();
      await saving;
      await save();
      rmSync(files.running, { force: true });
      composition.dispose();
      await Promise.all([cosmosServer?.close(), queueServer?.close(), anvil?.close()]);
    })());

  return { credentials, deps: composition.deps, stop };
};
