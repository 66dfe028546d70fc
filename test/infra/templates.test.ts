/**
 * The Bicep templates, checked without the Bicep CLI (it cannot be installed here; the infra workflow
 * builds them where it can). Every check runs on the real files and must come out clean, and the
 * second half feeds the same checks broken copies to show that each one can fail.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apimProductOfPlan } from '../../shared/adapters/apim/products';
import { loadConfig } from '../../shared/config';
import { allRoutes } from '../../shared/http/routes';
import { allContainers, allQueues } from '../../shared/registry';
import { brokenCopy, readInfraFiles, repoRoot } from './support/files';
import {
  checkAbuseLimits,
  checkApiVersions,
  checkAppSecrets,
  checkContainers,
  checkDiagnostics,
  checkEdgeSecretFirstRun,
  checkGateway,
  checkGatewayRouting,
  checkGatewayStep,
  checkIdentityAndSettings,
  checkNoSecrets,
  checkOpenApiDocuments,
  checkOutputs,
  checkParameterDescriptions,
  checkParameterFiles,
  checkPaymentSettings,
  checkQueues,
  checkReferences,
  type KnownChain,
  type PaymentExpectations,
} from './support/template-checks';

const files = readInfraFiles();
const appDefaults = loadConfig({ STORE: 'memory', APP_ENV: 'development' });
const planQuotas = { starter: appDefaults.PLAN_QUOTAS.starter, pro: appDefaults.PLAN_QUOTAS.pro, enterprise: appDefaults.PLAN_QUOTAS.enterprise };
/** The defaults of KEYLESS_RATE_LIMIT_PER_MINUTE, X402_RATE_LIMIT_PER_MINUTE and SPLIT_DEPLOY_DAILY_BUDGET in the app. */
const abuseLimits = {
  keylessCallsPerMinute: appDefaults.KEYLESS_RATE_LIMIT_PER_MINUTE,
  x402CallsPerMinute: appDefaults.X402_RATE_LIMIT_PER_MINUTE,
  splitDeployDailyBudget: appDefaults.SPLIT_DEPLOY_DAILY_BUDGET,
};

/**
 * The networks a parameter file may name and what the app must run with on each: the chain id,
 * Circle's USDC, Tether's USDT (none on either: Tether issues none on Base), Chainlink's ETH/USD feed
 * with its heartbeat, the explorer. Written out here from the issuers' and Chainlink's lists, apart
 * from the app's presets, so a wrong preset fails too. A new network is added here and in
 * shared/domain/chain-networks.ts.
 */
const chains: Record<string, KnownChain> = {
  base: {
    name: 'Base',
    chainId: 8453,
    usdcAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    usdtAddress: '',
    ethUsdFeedAddress: '0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70',
    feedHeartbeat: 1200,
    chainExplorerUrl: 'https://basescan.org',
  },
  'base-sepolia': {
    name: 'Base Sepolia',
    chainId: 84532,
    usdcAddress: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    usdtAddress: '',
    ethUsdFeedAddress: '0x4aDC67696bA383F43DD60A9e78F2C97Fbbfc7cb1',
    feedHeartbeat: 1200,
    chainExplorerUrl: 'https://sepolia.basescan.org',
  },
};

/** The payment settings as the app reads them in Azure (production): every value must pass its configuration check, under the name it reads. */
const payments: PaymentExpectations = {
  chains,
  defaultNetwork: 'base',
  appDefaults: {
    quoteLockSeconds: appDefaults.QUOTE_LOCK_SECONDS,
    receiptExpirySeconds: appDefaults.RECEIPT_EXPIRY_SECONDS,
    paymentSlippageBps: appDefaults.PAYMENT_SLIPPAGE_BPS,
    watchBlockRange: appDefaults.WATCH_BLOCK_RANGE,
    portalCallsPerMinute: appDefaults.PORTAL_RATE_LIMIT_PER_MINUTE,
    settlementDailyBudget: appDefaults.SETTLEMENT_DAILY_BUDGET,
    distributionDailyBudget: appDefaults.DISTRIBUTION_DAILY_BUDGET,
    sweepDailyBudget: appDefaults.SWEEP_DAILY_BUDGET,
    x402MinOrderUsdc: Number(appDefaults.X402_MIN_ORDER_USDC),
    distributeMinUsdc: Number(appDefaults.DISTRIBUTE_MIN_USDC),
    distributeMinUsdt: Number(appDefaults.DISTRIBUTE_MIN_USDT),
    distributeMinEthWei: Number(appDefaults.DISTRIBUTE_MIN_ETH_WEI),
  },
  load: (env) => {
    // The rest of a production configuration with a chain, so that the check looks at these settings only.
    const rest = {
      STORE: 'memory',
      APP_ENV: 'production',
      JWT_SECRET: 'j'.repeat(32),
      DATA_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
      CHAIN_RPC_URL: 'https://rpc.example.com',
      SPLIT_FACTORY_ADDRESS: `0x${'1'.repeat(40)}`,
      RELAYER_PRIVATE_KEY: `0x${'2'.repeat(64)}`,
    };
    try {
      const config = loadConfig({ ...rest, ...env }) as unknown as Record<string, unknown>;
      const unread = Object.entries(env)
        .filter(([name, value]) => value !== '' && config[name] === undefined)
        .map(([name]) => `${name} is not a setting the app reads`);
      return { config, problems: unread };
    } catch (error) {
      return { problems: [(error as Error).message.replace(/\s+/g, ' ')] };
    }
  },
};

const gatewayRoutes = allRoutes.map((route) => ({ name: route.name, method: route.method, path: route.path, auth: route.auth.kind }));
const hostJson = readFileSync(join(repoRoot, 'host.json'), 'utf8');

describe('infra templates', () => {
  it('has the entry point, both parameter files and the modules', () => {
    expect(Object.keys(files)).toEqual(
      expect.arrayContaining(['main.bicep', 'dev.bicepparam', 'prod.bicepparam', 'modules/roles.bicep', 'modules/apim.bicep', 'cosmos-containers.json']),
    );
  });

  it('refers only to files that exist and to Azure Verified Modules pinned to a version, within Bicep load limits', () => {
    expect(checkReferences(files)).toEqual([]);
  });

  it('describes every parameter', () => {
    expect(checkParameterDescriptions(files)).toEqual([]);
  });

  it('pins the API version of every resource', () => {
    expect(checkApiVersions(files)).toEqual([]);
  });

  it('fetches no keys, writes no secret values, and feeds secure parameters from the environment', () => {
    expect(checkNoSecrets(files)).toEqual([]);
  });

  it('sets, in each parameter file, every required parameter and nothing else', () => {
    expect(checkParameterFiles(files)).toEqual([]);
  });

  it('creates every queue of shared/registry.ts and its poison queue', () => {
    expect(allQueues.length).toBeGreaterThan(0);
    expect(checkQueues(files, allQueues)).toEqual([]);
  });

  it('declares every container of shared/registry.ts with its partition key, unique keys and composite indexes', () => {
    expect(checkContainers(files, allContainers, appDefaults.COSMOS_DATABASE)).toEqual([]);
  });

  it('reaches every data store by identity and role, with secrets as Key Vault references', () => {
    expect(checkIdentityAndSettings(files)).toEqual([]);
  });

  it("imports both generated OpenAPI documents and puts each plan in the key issuer's product (not a built-in one) with the quota of shared/config.ts", () => {
    expect(planQuotas).toEqual({ starter: 60, pro: 600, enterprise: 3000 });
    expect(checkGateway(files, planQuotas, apimProductOfPlan)).toEqual([]);
  });

  it('writes the Functions host key and configures API Management only in the gateway step (DEPLOY_GATEWAY), after the code', () => {
    expect(checkGatewayStep(files)).toEqual([]);
  });

  it('outputs the gateway URL, the Function App name and host name, and more, all from the first step on', () => {
    expect(checkOutputs(files)).toEqual([]);
  });

  it("masks subscription keys in API Management's telemetry and gateway logs", () => {
    expect(checkDiagnostics(files)).toEqual([]);
  });

  it('sets the keyless and x402 rate limits (gateway and app setting) and the daily split-deployment budget', () => {
    expect(abuseLimits).toEqual({ keylessCallsPerMinute: 120, x402CallsPerMinute: 30, splitDeployDailyBudget: 200 });
    expect(checkAbuseLimits(files, abuseLimits)).toEqual([]);
  });

  it('lets the first production run write the edge secret into the vault it creates', () => {
    expect(checkEdgeSecretFirstRun(files)).toEqual([]);
  });

  it('can merge the two generated OpenAPI documents into one API', () => {
    expect(checkOpenApiDocuments(files)).toEqual([]);
  });

  it('keeps the app secrets (the relayer key among them) in Key Vault, referenced by the app settings and out of the gateway identity\'s reach', () => {
    expect(checkAppSecrets(files)).toEqual([]);
  });

  it("sets every payment setting from a parameter: Base mainnet by default, each parameter file on one known network, values the app accepts and runs with the issuers' contracts", () => {
    expect(checkPaymentSettings(files, payments)).toEqual([]);
  });

  it('routes every path, pages without /api included, to the Function App, and admits every route without a key but the key routes', () => {
    expect(gatewayRoutes.filter((route) => !route.path.startsWith('/api/')).map((route) => route.path)).toEqual(expect.arrayContaining(['/healthz', '/portal/{id}', '/pay/{id}']));
    expect(checkGatewayRouting(files, { routes: gatewayRoutes, hostJson })).toEqual([]);
  });
});

describe('the template checks fail on a broken copy', () => {
  it('a queue removed', () => {
    const copy = brokenCopy(files, 'main.bicep', /^\s*'outbox-rejected-poison'\n/m);
    expect(checkQueues(copy, allQueues)).toEqual(['main.bicep: queue outbox-rejected-poison is not in queueNames']);
    const base = brokenCopy(files, 'main.bicep', /^\s*'webhooks'\n/m);
    expect(checkQueues(base, allQueues)).toEqual(['main.bicep: queue webhooks is not in queueNames']);
  });

  it('the queue loop removed from the storage module', () => {
    const copy = brokenCopy(files, 'modules/storage.bicep', 'for queueName in queueNames', "for queueName in ['webhooks']");
    expect(checkQueues(copy, allQueues)).toEqual(['modules/storage.bicep: no queue resource created for each of queueNames']);
  });

  it("a parameter's description removed", () => {
    const copy = brokenCopy(files, 'main.bicep', /^@description\('Brand display name \(BRAND_NAME\)\.'\)\n/m);
    expect(checkParameterDescriptions(copy)).toEqual([expect.stringMatching(/^main\.bicep:\d+: param brandName has no @description$/)]);
    const inModule = brokenCopy(files, 'modules/functionapp.bicep', /^@description\('CHAIN_NETWORK: .*'\)\n/m);
    expect(checkParameterDescriptions(inModule)).toEqual([expect.stringMatching(/^modules\/functionapp\.bicep:\d+: param chainNetwork has no @description$/)]);
  });

  it('a container removed, or partitioned differently from the code', () => {
    const containers = JSON.parse(files['cosmos-containers.json']!) as { containers: Array<{ name: string; partitionKey: string }> };
    const without = { ...containers, containers: containers.containers.filter((container) => container.name !== 'deliveries') };
    expect(checkContainers({ ...files, 'cosmos-containers.json': JSON.stringify(without) }, allContainers, 'payments')).toEqual([
      'cosmos-containers.json: container deliveries (partition key /receiptId) is missing',
    ]);
    const moved = { ...containers, containers: containers.containers.map((c) => (c.name === 'receipts' ? { ...c, partitionKey: '/id' } : c)) };
    expect(checkContainers({ ...files, 'cosmos-containers.json': JSON.stringify(moved) }, allContainers, 'payments')).toEqual([
      'cosmos-containers.json: receipts is partitioned by /id; the code uses /wallet',
    ]);
  });

  it('the inventory unique key or a composite index dropped', () => {
    const copy = brokenCopy(files, 'cosmos-containers.json', '"uniqueKeys": [["/sku"]],', '');
    expect(checkContainers(copy, allContainers, 'payments')).toEqual([
      'cosmos-containers.json: inventory unique keys [] differ from [["/sku"]]',
    ]);
    const index = brokenCopy(files, 'cosmos-containers.json', /,\s*\[\{"path":"\/updatedAt","order":"descending"\},\{"path":"\/id","order":"descending"\}\]/, '');
    expect(checkContainers(index, allContainers, 'payments')).toEqual(['cosmos-containers.json: inventory composite indexes differ from shared/registry.ts']);
  });

  it('TTL left off a container of temporary records, or the per-document TTL dropped from the module', () => {
    const copy = brokenCopy(files, 'cosmos-containers.json', /("name": "claims",\s*"partitionKey": "\/id"),\s*"expiring": true/, '$1');
    expect(checkContainers(copy, allContainers, 'payments')).toEqual(['cosmos-containers.json: claims needs per-document TTL (expiring), as in shared/registry.ts']);
    const module = brokenCopy(files, 'modules/cosmos.bicep', /defaultTtl: .*\n/, '');
    expect(checkContainers(module, allContainers, 'payments')).toEqual(['modules/cosmos.bicep: does not declare per-document TTL for expiring containers']);
  });

  it('an API version or a module version left out', () => {
    const copy = brokenCopy(files, 'modules/storage.bicep', "'Microsoft.Storage/storageAccounts/queueServices/queues@2023-05-01'", "'Microsoft.Storage/storageAccounts/queueServices/queues'");
    expect(checkApiVersions(copy)).toEqual([expect.stringContaining("resource queues 'Microsoft.Storage/storageAccounts/queueServices/queues' does not pin")]);
    const avm = brokenCopy(files, 'main.bicep', "'br/public:avm/res/managed-identity/user-assigned-identity:0.4.1' = {\n  name: 'app-identity'", "'br/public:avm/res/managed-identity/user-assigned-identity' = {\n  name: 'app-identity'");
    expect(checkReferences(avm)).toEqual([expect.stringContaining('module appIdentity')]);
  });

  it('a module file missing, or a file too large for loadTextContent', () => {
    const { ['modules/alerts.bicep']: _, ...withoutAlerts } = files;
    expect(checkReferences(withoutAlerts)).toEqual(['main.bicep: module alerts refers to modules/alerts.bicep, which does not exist']);
    const text = brokenCopy(files, 'modules/apim.bicep', "loadJsonContent('../openapi.keyed.json')", "loadTextContent('../openapi.keyed.json')");
    expect(checkReferences(text)).toEqual([expect.stringMatching(/loadTextContent\('\.\.\/openapi\.keyed\.json'\) loads \d+ characters; Bicep stops at 131072/)]);
  });

  it('keys fetched or written into the templates', () => {
    const listKeys = { ...files, 'modules/storage.bicep': `${files['modules/storage.bicep']}\noutput key string = account.listKeys().keys[0].value\n` };
    expect(checkNoSecrets(listKeys)).toEqual([expect.stringMatching(/^modules\/storage\.bicep:\d+: calls an ARM list\*\(\) function/)]);
    const accountKey = { ...files, 'modules/functionapp.bicep': `${files['modules/functionapp.bicep']}\n// DefaultEndpointsProtocol=https;AccountName=x;AccountKey=abc\n` };
    expect(checkNoSecrets(accountKey)).toEqual([expect.stringContaining('holds a storage account key connection string')]);
    const relayer = brokenCopy(files, 'dev.bicepparam', "readEnvironmentVariable('RELAYER_PRIVATE_KEY', '')", `'0x${'ab'.repeat(32)}'`);
    expect(checkNoSecrets(relayer)).toEqual([
      expect.stringContaining('holds a 32-byte hex literal'),
      expect.stringContaining('holds a key-like literal'),
      expect.stringContaining('secure param relayerPrivateKey must come from readEnvironmentVariable()'),
    ]);
    const dataKey = brokenCopy(files, 'modules/keyvault.bicep', "param dataEncryptionKey string\n", `param dataEncryptionKey string = '${createHash('sha256').update('a data key').digest('base64')}'\n`);
    expect(checkNoSecrets(dataKey)).toEqual([expect.stringContaining('holds a key-like literal'), expect.stringContaining('secure param dataEncryptionKey has a default value')]);
  });

  it('a parameter file that misses a required parameter or sets an unknown one', () => {
    const copy = brokenCopy(files, 'dev.bicepparam', /^param platformWallet = (.*)\n/m, 'param platformWalletAddress = $1\n');
    expect(checkParameterFiles(copy)).toEqual([
      'dev.bicepparam: param platformWalletAddress is not a parameter of main.bicep',
      'dev.bicepparam: required param platformWallet of main.bicep is not set',
    ]);
  });

  it('shared-key access, a Cosmos key, or a role assignment outside roles.bicep', () => {
    const sharedKey = brokenCopy(files, 'modules/storage.bicep', 'allowSharedKeyAccess: false', 'allowSharedKeyAccess: true');
    expect(checkIdentityAndSettings(sharedKey)).toEqual(['modules/storage.bicep: shared-key access is not off (allowSharedKeyAccess: false)']);
    const cosmosKey = brokenCopy(files, 'modules/functionapp.bicep', "{ name: 'COSMOS_DATABASE', value: cosmosDatabaseName }", "{ name: 'COSMOS_DATABASE', value: cosmosDatabaseName }\n    { name: 'COSMOS_KEY', value: 'x' }");
    expect(checkIdentityAndSettings(cosmosKey)).toEqual(['modules/functionapp.bicep: app setting COSMOS_KEY must not exist (identity-based access)']);
    const plainSecret = brokenCopy(files, 'modules/functionapp.bicep', "{ name: 'JWT_SECRET', value: keyVaultReference.jwtSecret }", "{ name: 'JWT_SECRET', value: jwtSecret }");
    expect(checkIdentityAndSettings(plainSecret)).toEqual([expect.stringContaining('app setting JWT_SECRET is jwtSecret')]);
    const stray = { ...files, 'modules/storage.bicep': `${files['modules/storage.bicep']}\nresource extra 'Microsoft.Authorization/roleAssignments@2022-04-01' = {\n  name: 'x'\n}\n` };
    expect(checkIdentityAndSettings(stray)).toEqual(['modules/storage.bicep: Microsoft.Authorization/roleAssignments outside modules/roles.bicep']);
  });

  it('a plan product with the wrong quota, or subscriptions not required', () => {
    const quota = brokenCopy(files, 'modules/apim.bicep', "callsPerMinute: 600 }", "callsPerMinute: 6000 }");
    expect(checkGateway(quota, planQuotas, apimProductOfPlan)).toEqual(['modules/apim.bicep: plan pro does not carry 600 calls a minute']);
    const open = brokenCopy(files, 'modules/apim.bicep', "apiType: 'http'\n    subscriptionRequired: true", "apiType: 'http'\n    subscriptionRequired: false");
    expect(checkGateway(open, planQuotas, apimProductOfPlan)).toEqual(['modules/apim.bicep: the API does not require a subscription']);
  });

  it("a plan in API Management's built-in starter product, or in another product than the key issuer's", () => {
    const builtIn = brokenCopy(files, 'modules/apim.bicep', "product: 'plan-starter'", "product: 'starter'");
    expect(checkGateway(builtIn, planQuotas, apimProductOfPlan)).toEqual([
      'modules/apim.bicep: plan starter is in product starter; the key issuer uses plan-starter',
      'modules/apim.bicep: product starter is a product API Management may already have',
    ]);
    const display = brokenCopy(files, 'modules/apim.bicep', "displayName: 'Starter plan'", "displayName: 'Starter'");
    expect(checkGateway(display, planQuotas, apimProductOfPlan)).toEqual([
      'modules/apim.bicep: product plan-starter has the display name Starter, which another product may already have',
    ]);
    const named = brokenCopy(files, 'modules/apim.bicep', 'name: plan.product', 'name: plan.plan');
    expect(checkGateway(named, planQuotas, apimProductOfPlan)).toEqual(['modules/apim.bicep: the plan products are not named plan.product']);
  });

  it('the host key written on the first run, with the Function App, as before the gateway step existed', () => {
    const hostKey = `
resource functionsHost 'Microsoft.Web/sites/host@2024-04-01' existing = {
  parent: site
  name: 'default'
}

resource gatewayHostKey 'Microsoft.Web/sites/host/functionKeys@2024-04-01' = {
  parent: functionsHost
  name: 'apim'
  properties: {
    name: 'apim'
    value: gatewayFunctionKey
  }
}
`;
    const inFunctionApp = { ...files, 'modules/functionapp.bicep': `${files['modules/functionapp.bicep']}${hostKey}` };
    expect(checkGatewayStep(inFunctionApp)).toEqual([expect.stringMatching(/^modules\/functionapp\.bicep: the host key is written on every run, also on the first/)]);
    const always = brokenCopy(files, 'main.bicep', "module gatewayHostKey 'modules/gateway-host-key.bicep' = if (deployGateway) {", "module gatewayHostKey 'modules/gateway-host-key.bicep' = {");
    expect(checkGatewayStep(always)).toEqual([expect.stringMatching(/^modules\/gateway-host-key\.bicep: the host key is written on every run/)]);
    const apim = brokenCopy(files, 'main.bicep', "module apim 'modules/apim.bicep' = if (deployGateway) {", "module apim 'modules/apim.bicep' = {");
    expect(checkGatewayStep(apim)).toEqual(["main.bicep: API Management's configuration (modules/apim.bicep) is not deployed under deployGateway with the host key"]);
    const env = brokenCopy(files, 'dev.bicepparam', "bool(readEnvironmentVariable('DEPLOY_GATEWAY', 'true'))", 'true');
    expect(checkGatewayStep(env)).toEqual(["dev.bicepparam: param deployGateway is not bool(readEnvironmentVariable('DEPLOY_GATEWAY', 'true'))"]);
  });

  it('an output missing, or read from a module the first step does not deploy', () => {
    const missing = brokenCopy(files, 'main.bicep', /^output gatewayUrl string = .*\n/m);
    expect(checkOutputs(missing)).toEqual(['main.bicep: no output gatewayUrl']);
    const late = { ...files, 'main.bicep': `${files['main.bicep']}\noutput apiName string = apim.outputs.apiName\n` };
    expect(checkOutputs(late)).toEqual(['main.bicep: output apiName comes from apim, which the first step does not deploy']);
  });

  it('telemetry that logs the subscription-key query parameter or the key headers', () => {
    const query = brokenCopy(files, 'modules/apim.bicep', "{ value: 'subscription-key', mode: 'Mask' }", '');
    expect(checkDiagnostics(query)).toEqual([
      'modules/apim.bicep: diagnostic applicationinsights: frontend request does not mask the subscription-key query parameter',
      'modules/apim.bicep: diagnostic applicationinsights: backend request does not mask the subscription-key query parameter',
      'modules/apim.bicep: diagnostic azuremonitor: frontend request does not mask the subscription-key query parameter',
      'modules/apim.bicep: diagnostic azuremonitor: backend request does not mask the subscription-key query parameter',
    ]);
    const header = brokenCopy(files, 'modules/apim.bicep', "{ value: 'x-api-key', mode: 'Hide' }", "{ value: 'x-api-key', mode: 'Default' }");
    expect(checkDiagnostics(header)).toHaveLength(4);
    const gatewayLogs = brokenCopy(files, 'modules/apim.bicep', /resource azureMonitorDiagnostic [\s\S]*?\n}\n/);
    expect(checkDiagnostics(gatewayLogs)).toEqual(['modules/apim.bicep: no azuremonitor diagnostic']);
  });

  it('the keyless rate limit or the split budget not reaching the gateway or the app', () => {
    const setting = brokenCopy(files, 'modules/functionapp.bicep', /^\s*\{ name: 'SPLIT_DEPLOY_DAILY_BUDGET'.*\n/m);
    expect(checkAbuseLimits(setting, abuseLimits)).toEqual(['modules/functionapp.bicep: app setting SPLIT_DEPLOY_DAILY_BUDGET is not string(splitDeployDailyBudget)']);
    const gateway = brokenCopy(files, 'main.bicep', /^\s*keylessCallsPerMinute: keylessCallsPerMinute\n(?=(\s*\w+: \w+\n)*\s*\}\n\s*\/\/ The Key Vault-backed)/m);
    expect(checkAbuseLimits(gateway, abuseLimits)).toEqual(['main.bicep: modules/apim.bicep is not given keylessCallsPerMinute']);
    const value = brokenCopy(files, 'main.bicep', 'param keylessCallsPerMinute int = 120', 'param keylessCallsPerMinute int = 1200');
    expect(checkAbuseLimits(value, abuseLimits)).toEqual(['main.bicep: no param keylessCallsPerMinute int = 120']);
  });

  it('the x402 rate limit missing, not reaching the gateway or the app, or applied to other operations', () => {
    const param = brokenCopy(files, 'main.bicep', /^param x402CallsPerMinute int = 30\n/m, 'param x402CallsPerMinute int = 120\n');
    expect(checkAbuseLimits(param, abuseLimits)).toEqual(['main.bicep: no param x402CallsPerMinute int = 30']);
    const gateway = brokenCopy(files, 'main.bicep', /^\s*x402CallsPerMinute: x402CallsPerMinute\n(?=(\s*\w+: \w+\n)*\s*\}\n\s*\/\/ The Key Vault-backed)/m);
    expect(checkAbuseLimits(gateway, abuseLimits)).toEqual(['main.bicep: modules/apim.bicep is not given x402CallsPerMinute']);
    const setting = brokenCopy(files, 'modules/functionapp.bicep', /^\s*\{ name: 'X402_RATE_LIMIT_PER_MINUTE'.*\n/m);
    expect(checkAbuseLimits(setting, abuseLimits)).toEqual(['modules/functionapp.bicep: app setting X402_RATE_LIMIT_PER_MINUTE is not string(x402CallsPerMinute)']);
    const keyed = brokenCopy(files, 'modules/apim.bicep', 'items(keylessDocument.paths),\n  path => map(filter(', 'items(keyedDocument.paths),\n  path => map(filter(');
    expect(checkAbuseLimits(keyed, abuseLimits)).toEqual(["modules/apim.bicep: var x402OperationIds is not the operation ids of the keyless document's x402 operations (x-auth kind x402)"]);
    const named = brokenCopy(files, 'modules/apim.bicep', "value: '|${join(x402OperationIds, '|')}|'", "value: '|${join(keyedOperationIds, '|')}|'");
    expect(checkAbuseLimits(named, abuseLimits)).toEqual(["modules/apim.bicep: the named value x402-operations is not '|' + the x402 operation ids joined by '|' + '|'"]);
  });

  it('an edge secret that has to exist before the first production run', () => {
    const before = brokenCopy(files, 'prod.bicepparam', /^\/\/ The edge proxy .*\n/m, '// The edge proxy injects x-edge-secret; the Key Vault secret edge-secret must exist first.\n');
    expect(checkEdgeSecretFirstRun(before)).toEqual([expect.stringMatching(/^prod\.bicepparam:\d+: says a secret must exist before the deployment/)]);
    const notWritten = brokenCopy(files, 'main.bicep', /^\s*edgeSecret: edgeSecret\n/m);
    expect(checkEdgeSecretFirstRun(notWritten)).toEqual(['main.bicep: the Key Vault module is not given edgeSecret']);
  });

  it('the relayer secret missing, copied into a setting, or readable by the gateway', () => {
    const notWritten = brokenCopy(files, 'modules/keyvault.bicep', /^resource relayerPrivateKeyValue [\s\S]*?\n}\n/m);
    expect(checkAppSecrets(notWritten)).toEqual(['modules/keyvault.bicep: relayerPrivateKey is not written as the secret secretNames.relayerPrivateKey (when given)']);
    const notGiven = brokenCopy(files, 'main.bicep', /^\s*relayerPrivateKey: relayerPrivateKey\n/m);
    expect(checkAppSecrets(notGiven)).toEqual(['main.bicep: the Key Vault module is not given relayerPrivateKey']);
    const noSetting = brokenCopy(files, 'modules/functionapp.bicep', /^\s*\{ name: 'RELAYER_PRIVATE_KEY'.*\n/m);
    expect(checkAppSecrets(noSetting)).toEqual(['modules/functionapp.bicep: app setting RELAYER_PRIVATE_KEY is not keyVaultReference.relayerPrivateKey']);
    expect(checkIdentityAndSettings(noSetting)).toEqual(['modules/functionapp.bicep: app setting RELAYER_PRIVATE_KEY is missing']);
    const gateway = brokenCopy(files, 'main.bicep', '[keyVault.outputs.secretNames.gatewayFunctionKey]', '[keyVault.outputs.secretNames.gatewayFunctionKey, keyVault.outputs.secretNames.relayerPrivateKey]');
    expect(checkAppSecrets(gateway)).toEqual(['main.bicep: the gateway identity may read relayer-private-key; only the app needs it']);
    const env = brokenCopy(files, 'prod.bicepparam', "readEnvironmentVariable('RELAYER_PRIVATE_KEY', '')", "readEnvironmentVariable('RELAYER_KEY', '')");
    expect(checkAppSecrets(env)).toEqual(["prod.bicepparam: param relayerPrivateKey is not readEnvironmentVariable('RELAYER_PRIVATE_KEY', '')"]);
  });

  it('the receipt-signing secret missing, copied into a setting, or readable by the gateway', () => {
    const notWritten = brokenCopy(files, 'modules/keyvault.bicep', /^resource receiptSigningKeyValue [\s\S]*?\n}\n/m);
    expect(checkAppSecrets(notWritten)).toEqual(['modules/keyvault.bicep: receiptSigningKey is not written as the secret secretNames.receiptSigningKey (when given)']);
    const notGiven = brokenCopy(files, 'main.bicep', /^\s*receiptSigningKey: receiptSigningKey\n/m);
    expect(checkAppSecrets(notGiven)).toEqual(['main.bicep: the Key Vault module is not given receiptSigningKey']);
    const copied = brokenCopy(files, 'modules/functionapp.bicep', "{ name: 'RECEIPT_SIGNING_KEY', value: keyVaultReference.receiptSigningKey }", "{ name: 'RECEIPT_SIGNING_KEY', value: receiptSigningKey }");
    expect(checkAppSecrets(copied)).toEqual(['modules/functionapp.bicep: app setting RECEIPT_SIGNING_KEY is not keyVaultReference.receiptSigningKey']);
    const noSetting = brokenCopy(files, 'modules/functionapp.bicep', /^\s*\{ name: 'RECEIPT_SIGNING_KEY'.*\n/m);
    expect(checkIdentityAndSettings(noSetting)).toEqual(['modules/functionapp.bicep: app setting RECEIPT_SIGNING_KEY is missing']);
    const gateway = brokenCopy(files, 'main.bicep', '[keyVault.outputs.secretNames.gatewayFunctionKey]', '[keyVault.outputs.secretNames.gatewayFunctionKey, keyVault.outputs.secretNames.receiptSigningKey]');
    expect(checkAppSecrets(gateway)).toEqual(['main.bicep: the gateway identity may read receipt-signing-key; only the app needs it']);
    const env = brokenCopy(files, 'dev.bicepparam', "readEnvironmentVariable('RECEIPT_SIGNING_KEY', '')", "'0x" + "ab".repeat(32) + "'");
    expect(checkAppSecrets(env)).toEqual(["dev.bicepparam: param receiptSigningKey is not readEnvironmentVariable('RECEIPT_SIGNING_KEY', '')"]);
  });

  it('a payment setting missing, or not reaching the app', () => {
    const setting = brokenCopy(files, 'modules/functionapp.bicep', /^\s*\{ name: 'CHAIN_CONFIRMATIONS'.*\n/m);
    expect(checkPaymentSettings(setting, payments)).toEqual(['modules/functionapp.bicep: app setting CHAIN_CONFIRMATIONS is missing']);
    const unwired = brokenCopy(files, 'main.bicep', /^\s*ethUsdFeedAddress: ethUsdFeedAddress\n/m);
    expect(checkPaymentSettings(unwired, payments)).toEqual(['main.bicep: modules/functionapp.bicep is not given ethUsdFeedAddress']);
    const misnamed = brokenCopy(files, 'modules/functionapp.bicep', "{ name: 'WATCH_BLOCK_RANGE', value: string(watchBlockRange) }", "{ name: 'WATCH_BLOCK_RANGE', value: string(quoteLockSeconds) }");
    expect(checkPaymentSettings(misnamed, payments)).toEqual(['modules/functionapp.bicep: app setting WATCH_BLOCK_RANGE is string(quoteLockSeconds), expected string(watchBlockRange)']);
  });

  it("the relayer's gas rules not reaching the app, defaulting to other values than the app's, or a minimum order the app refuses", () => {
    const setting = brokenCopy(files, 'modules/functionapp.bicep', /^\s*\{ name: 'DISTRIBUTE_MIN_USDC'.*\n/m);
    expect(checkPaymentSettings(setting, payments)).toEqual(['modules/functionapp.bicep: app setting DISTRIBUTE_MIN_USDC is missing']);
    const unwired = brokenCopy(files, 'main.bicep', /^\s*settlementDailyBudget: settlementDailyBudget\n/m);
    expect(checkPaymentSettings(unwired, payments)).toEqual(['main.bicep: modules/functionapp.bicep is not given settlementDailyBudget']);
    const other = brokenCopy(files, 'main.bicep', 'param distributeMinEthWei int = 1250000000000000', 'param distributeMinEthWei int = 1000000000000000');
    expect(checkPaymentSettings(other, payments)).toEqual(["main.bicep: param distributeMinEthWei defaults to 1000000000000000; the app's default is 1250000000000000"]);
    const refused = brokenCopy(files, 'main.bicep', 'param x402MinOrderUsdc int = 2000000', 'param x402MinOrderUsdc int = 50000');
    expect(checkPaymentSettings(refused, payments)).toEqual([
      "main.bicep: param x402MinOrderUsdc defaults to 50000; the app's default is 2000000",
      expect.stringMatching(/^main\.bicep \(defaults\): invalid configuration: X402_MIN_ORDER_USDC: must be between 100000/),
      expect.stringMatching(/^dev\.bicepparam: invalid configuration: X402_MIN_ORDER_USDC/),
      expect.stringMatching(/^prod\.bicepparam: invalid configuration: X402_MIN_ORDER_USDC/),
    ]);
  });

  it('the x402 facilitator setting missing, not reaching the app, or a value the app refuses', () => {
    const setting = brokenCopy(files, 'modules/functionapp.bicep', /^\s*\{ name: 'X402_FACILITATOR_URL'.*\n/m);
    expect(checkPaymentSettings(setting, payments)).toEqual(['modules/functionapp.bicep: app setting X402_FACILITATOR_URL is missing']);
    const unwired = brokenCopy(files, 'main.bicep', /^\s*x402FacilitatorUrl: x402FacilitatorUrl\n/m);
    expect(checkPaymentSettings(unwired, payments)).toEqual(['main.bicep: modules/functionapp.bicep is not given x402FacilitatorUrl']);
    const required = brokenCopy(files, 'main.bicep', "param x402FacilitatorUrl string = ''", 'param x402FacilitatorUrl string');
    expect(checkPaymentSettings(required, payments)).toEqual(['main.bicep: param x402FacilitatorUrl is not a string with a default']);
    const refused = brokenCopy(files, 'prod.bicepparam', "param x402FacilitatorUrl = ''", "param x402FacilitatorUrl = 'facilitator.example.com'");
    expect(checkPaymentSettings(refused, payments)).toEqual([expect.stringMatching(/^prod\.bicepparam: invalid configuration: X402_FACILITATOR_URL: /)]);
    const remote = brokenCopy(files, 'prod.bicepparam', "param x402FacilitatorUrl = ''", "param x402FacilitatorUrl = 'https://facilitator.example.com'");
    expect(checkPaymentSettings(remote, payments)).toEqual([]);
  });

  it('payment defaults that are not Base mainnet or not the app\'s, an override that is not empty by default, a feed limit without margin, a value the app refuses', () => {
    const network = brokenCopy(files, 'main.bicep', "param chainNetwork string = 'base'", "param chainNetwork string = 'base-sepolia'");
    expect(checkPaymentSettings(network, payments)).toEqual(['main.bicep: the default chainNetwork is base-sepolia, not base']);
    const local = brokenCopy(files, 'main.bicep', "  'base-sepolia'\n])", "  'base-sepolia'\n  'local'\n])");
    expect(checkPaymentSettings(local, payments)).toEqual(['main.bicep: param chainNetwork allows base, base-sepolia, local, not the networks the checks know (base, base-sepolia)']);
    const feed = brokenCopy(files, 'main.bicep', "param ethUsdFeedAddress string = ''", "param ethUsdFeedAddress string = '0x4aDC67696bA383F43DD60A9e78F2C97Fbbfc7cb1'");
    expect(checkPaymentSettings(feed, payments)).toEqual([
      "main.bicep: param ethUsdFeedAddress defaults to 0x4aDC67696bA383F43DD60A9e78F2C97Fbbfc7cb1; an override defaults to empty (the network's)",
      'main.bicep (defaults): ETH_USD_FEED_ADDRESS would be "0x4adc67696ba383f43dd60a9e78f2c97fbbfc7cb1"; on Base (base) it is "0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70"',
      'prod.bicepparam: ETH_USD_FEED_ADDRESS would be "0x4adc67696ba383f43dd60a9e78f2c97fbbfc7cb1"; on Base (base) it is "0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70"',
    ]);
    const lock = brokenCopy(files, 'main.bicep', 'param quoteLockSeconds int = 600', 'param quoteLockSeconds int = 900');
    expect(checkPaymentSettings(lock, payments)).toEqual(["main.bicep: param quoteLockSeconds defaults to 900; the app's default is 600"]);
    const heartbeat = brokenCopy(files, 'prod.bicepparam', "param chainNetwork = 'base'", "param chainNetwork = 'base'\nparam feedHeartbeatSeconds = 1200");
    expect(checkPaymentSettings(heartbeat, payments)).toEqual([
      "prod.bicepparam: FEED_HEARTBEAT_SECONDS 1200 leaves no margin over the Base feed's 1200-second heartbeat: a healthy feed would read as stale",
    ]);
    const refused = brokenCopy(files, 'prod.bicepparam', 'param paymentSlippageBps = 100', 'param paymentSlippageBps = 6000');
    expect(checkPaymentSettings(refused, payments)).toEqual([expect.stringMatching(/^prod\.bicepparam: invalid configuration: PAYMENT_SLIPPAGE_BPS: /)]);
  });

  it("a parameter file on one network with another network's contracts, not naming its network, or naming one the checks (and the app in production) refuse", () => {
    const mixed = brokenCopy(files, 'dev.bicepparam', "param chainNetwork = 'base-sepolia'", "param chainNetwork = 'base-sepolia'\nparam usdcAddress = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'");
    expect(checkPaymentSettings(mixed, payments)).toEqual([
      'dev.bicepparam: USDC_ADDRESS would be "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"; on Base Sepolia (base-sepolia) it is "0x036CbD53842c5426634e7929541eC2318f3dCF7e"',
    ]);
    const left = brokenCopy(files, 'dev.bicepparam', /^param chainNetwork = .*\n/m);
    expect(checkPaymentSettings(left, payments)).toEqual(["dev.bicepparam: sets no chainNetwork; each parameter file names its network (main.bicep's default is base)"]);
    const unknown = brokenCopy(files, 'dev.bicepparam', "param chainNetwork = 'base-sepolia'", "param chainNetwork = 'local'");
    expect(checkPaymentSettings(unknown, payments)).toEqual([
      expect.stringMatching(/^dev\.bicepparam: invalid configuration: .*CHAIN_NETWORK: local .*only with APP_ENV=development/),
      expect.stringMatching(/^dev\.bicepparam: chainNetwork local is not a network the checks know \(base, base-sepolia\)/),
    ]);
  });

  it('a portal route or page requiring a key at the gateway, missing from it, or not reaching the Function App', () => {
    const keyless = JSON.parse(files['openapi.keyless.json']!) as { paths: Record<string, Record<string, unknown>> };
    const keyed = JSON.parse(files['openapi.keyed.json']!) as { paths: Record<string, Record<string, unknown>> };
    const { ['/api/portal/{id}']: portal, ...rest } = keyless.paths;
    const moved = { ...files, 'openapi.keyless.json': JSON.stringify({ ...keyless, paths: rest }), 'openapi.keyed.json': JSON.stringify({ ...keyed, paths: { ...keyed.paths, '/api/portal/{id}': portal } }) };
    expect(checkGatewayRouting(moved, { routes: gatewayRoutes, hostJson })).toEqual([
      'openapi.keyed.json: GET /api/portal/{id} (portal-get) is a portal route: as a key route the gateway answers 401 without a key',
      'openapi.keyless.json: GET /api/portal/{id} (portal-get) is missing: the gateway would answer 404',
    ]);
    const { ['/pay/{id}']: _, ...withoutPay } = keyless.paths;
    const missing = { ...files, 'openapi.keyless.json': JSON.stringify({ ...keyless, paths: withoutPay }) };
    expect(checkGatewayRouting(missing, { routes: gatewayRoutes, hostJson })).toEqual(['openapi.keyless.json: GET /pay/{id} (pay-page) is missing: the gateway would answer 404']);
    const mounted = brokenCopy(files, 'modules/apim.bicep', "displayName: 'Crypto Receipts API'\n    path: ''", "displayName: 'Crypto Receipts API'\n    path: 'api'");
    expect(checkGatewayRouting(mounted, { routes: gatewayRoutes, hostJson })).toEqual([
      expect.stringMatching(/^modules\/apim\.bicep: the API is mounted at \/api, not the root: .*GET \/portal\/\{id\}.*GET \/pay\/\{id\}/),
    ]);
    const prefixed = hostJson.replace('"routePrefix": ""', '"routePrefix": "api"');
    expect(prefixed).not.toBe(hostJson);
    expect(checkGatewayRouting(files, { routes: gatewayRoutes, hostJson: prefixed })).toEqual([
      'host.json: extensions.http.routePrefix is "api", not "": the Functions host would serve every route under a prefix the gateway does not add',
    ]);
    const operationPolicy = `${files['modules/apim.bicep']}
resource portalPolicy 'Microsoft.ApiManagement/service/apis/operations/policies@2024-05-01' = {
  name: 'payments/portal-get/policy'
  properties: {
    format: 'xml'
    value: '<policies><inbound /><backend><forward-request /></backend><outbound /><on-error /></policies>'
  }
}
`;
    expect(checkGatewayRouting({ ...files, 'modules/apim.bicep': operationPolicy }, { routes: gatewayRoutes, hostJson })).toEqual([
      "modules/apim.bicep: portalPolicy: a policy on a route's operation; the API policy (key, size and rate checks) is the only one routes get",
    ]);
  });

  it('an x402 route or the directory requiring a key at the gateway', () => {
    const keyless = JSON.parse(files['openapi.keyless.json']!) as { paths: Record<string, Record<string, unknown>> };
    const keyed = JSON.parse(files['openapi.keyed.json']!) as { paths: Record<string, Record<string, unknown>> };
    for (const [path, method, name, auth] of [
      ['/api/x402/orders', 'POST', 'x402-orders', 'x402'],
      ['/api/x402/subscribe', 'POST', 'x402-subscribe', 'x402'],
      ['/api/directory/shops', 'GET', 'directory-shops', 'public'],
    ] as const) {
      expect(gatewayRoutes).toContainEqual({ name, method, path, auth });
      const { [path]: moved, ...rest } = keyless.paths;
      const copy = { ...files, 'openapi.keyless.json': JSON.stringify({ ...keyless, paths: rest }), 'openapi.keyed.json': JSON.stringify({ ...keyed, paths: { ...keyed.paths, [path]: moved } }) };
      expect(checkGatewayRouting(copy, { routes: gatewayRoutes, hostJson })).toEqual([
        `openapi.keyed.json: ${method} ${path} (${name}) is a ${auth} route: as a key route the gateway answers 401 without a key`,
        `openapi.keyless.json: ${method} ${path} (${name}) is missing: the gateway would answer 404`,
      ]);
    }
  });

  it('lets a call without a key through to the key routes that take sign-in-with-x, and to no other key route', () => {
    const keyed = JSON.parse(files['openapi.keyed.json']!) as { paths: Record<string, Record<string, { operationId: string; 'x-auth': Record<string, unknown> }>> };
    const siwx = Object.values(keyed.paths).flatMap((item) => Object.values(item)).filter((operation) => operation['x-auth'].signInWithX === true);
    expect(siwx.map((operation) => operation.operationId)).toEqual(['shop-config-get']);
    // keyed-operations (the 401 without a key in api.xml) leaves those out, and only those.
    const bicep = files['modules/apim.bicep']!;
    expect(bicep).toMatch(/var keyedOperationIds = flatten\(map\(\s*items\(keyedDocument\.paths\),\s*path => map\(filter\(items\(path\.value\), operation => !contains\(operation\.value\['x-auth'\], 'signInWithX'\)\)/);
    expect(bicep).toContain("value: '|${join(keyedOperationIds, '|')}|'");
  });

  it('a route in both generated documents', () => {
    const keyless = JSON.parse(files['openapi.keyless.json']!) as { paths: Record<string, unknown> };
    const keyed = JSON.parse(files['openapi.keyed.json']!) as { paths: Record<string, unknown> };
    const [path, item] = Object.entries(keyed.paths)[0]!;
    const copy = { ...files, 'openapi.keyless.json': JSON.stringify({ ...keyless, paths: { ...keyless.paths, [path]: item } }) };
    expect(checkOpenApiDocuments(copy).some((problem) => problem.includes('one API cannot hold it twice'))).toBe(true);
  });
});
