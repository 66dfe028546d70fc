/**
 * The Bicep templates, checked without the Bicep CLI (it cannot be installed here; the infra workflow
 * builds them where it can). Every check runs on the real files and must come out clean, and the
 * second half feeds the same checks broken copies to show that each one can fail.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config';
import { allContainers, allQueues } from '../../shared/registry';
import { brokenCopy, readInfraFiles } from './support/files';
import {
  checkApiVersions,
  checkContainers,
  checkGateway,
  checkIdentityAndSettings,
  checkNoSecrets,
  checkOpenApiDocuments,
  checkParameterDescriptions,
  checkParameterFiles,
  checkQueues,
  checkReferences,
} from './support/template-checks';

const files = readInfraFiles();
const appDefaults = loadConfig({ STORE: 'memory', APP_ENV: 'development' });
const planQuotas = { starter: appDefaults.PLAN_QUOTAS.starter, pro: appDefaults.PLAN_QUOTAS.pro, enterprise: appDefaults.PLAN_QUOTAS.enterprise };

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

  it('imports both generated OpenAPI documents and gives each plan product the quota of shared/config.ts', () => {
    expect(planQuotas).toEqual({ starter: 60, pro: 600, enterprise: 3000 });
    expect(checkGateway(files, planQuotas)).toEqual([]);
  });

  it('can merge the two generated OpenAPI documents into one API', () => {
    expect(checkOpenApiDocuments(files)).toEqual([]);
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
    const inModule = brokenCopy(files, 'modules/functionapp.bicep', /^@description\('CHAIN_ID\.'\)\n/m);
    expect(checkParameterDescriptions(inModule)).toEqual([expect.stringMatching(/^modules\/functionapp\.bicep:\d+: param chainId has no @description$/)]);
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
    const copy = brokenCopy(files, 'dev.bicepparam', /^param chainId = .*\n/m, 'param chainIdentifier = 84532\n');
    expect(checkParameterFiles(copy)).toEqual([
      'dev.bicepparam: param chainIdentifier is not a parameter of main.bicep',
      'dev.bicepparam: required param chainId of main.bicep is not set',
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
    expect(checkGateway(quota, planQuotas)).toEqual(['modules/apim.bicep: product pro does not carry 600 calls a minute']);
    const open = brokenCopy(files, 'modules/apim.bicep', "apiType: 'http'\n    subscriptionRequired: true", "apiType: 'http'\n    subscriptionRequired: false");
    expect(checkGateway(open, planQuotas)).toEqual(['modules/apim.bicep: the API does not require a subscription']);
  });

  it('a route in both generated documents', () => {
    const keyless = JSON.parse(files['openapi.keyless.json']!) as { paths: Record<string, unknown> };
    const keyed = JSON.parse(files['openapi.keyed.json']!) as { paths: Record<string, unknown> };
    const [path, item] = Object.entries(keyed.paths)[0]!;
    const copy = { ...files, 'openapi.keyless.json': JSON.stringify({ ...keyless, paths: { ...keyless.paths, [path]: item } }) };
    expect(checkOpenApiDocuments(copy).some((problem) => problem.includes('one API cannot hold it twice'))).toBe(true);
  });
});
