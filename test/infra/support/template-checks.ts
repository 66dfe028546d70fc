/**
 * Structural checks of the Bicep templates. Each check takes the infra files as contents (paths
 * relative to infra/, with forward slashes) and returns its problems as "file: message" lines, so a
 * test can run it on the real files and on a broken copy.
 */
import { posix } from 'node:path';
import type { ContainerSpec } from '../../../shared/registry';
import { lex, literalVariable, loadedFiles, moduleReferences, paramAssignments, paramDeclarations, resourceTypes, statements, stringArrayVariable, usingTarget, type BicepValue } from './bicep';

export type InfraFiles = Record<string, string>;

const bicepFiles = (files: InfraFiles) => Object.keys(files).filter((file) => file.endsWith('.bicep'));
const paramFiles = (files: InfraFiles) => Object.keys(files).filter((file) => file.endsWith('.bicepparam'));
const resolve = (from: string, target: string) => posix.normalize(posix.join(posix.dirname(from), target));

/** Azure Verified Modules from the public registry, pinned to an exact version. */
const AVM_REFERENCE = /^br\/public:avm\/(res|ptn|utl)\/[a-z0-9-]+(\/[a-z0-9-]+)*:\d+\.\d+\.\d+$/;
const PINNED_TYPE = /^[A-Za-z0-9.]+(\/[A-Za-z0-9.-]+)*@\d{4}-\d{2}-\d{2}(-preview)?$/;

/** Bicep's own limits on compile-time file loading (Bicep's LanguageConstants). */
export const LOAD_LIMITS: Record<string, number> = { loadTextContent: 131_072, loadJsonContent: 1_048_576 };

/** Every local module, loaded file and `using` target exists; registry modules are AVM with a version; nothing is orphaned. */
export const checkReferences = (files: InfraFiles): string[] => {
  const problems: string[] = [];
  const used = new Set<string>();
  for (const file of bicepFiles(files)) {
    for (const { symbol, reference } of moduleReferences(files[file]!)) {
      if (reference.startsWith('br/') || reference.startsWith('br:') || reference.startsWith('ts:') || reference.startsWith('ts/')) {
        if (!AVM_REFERENCE.test(reference)) problems.push(`${file}: module ${symbol} '${reference}' is not an Azure Verified Module pinned to a version (br/public:avm/...:x.y.z)`);
        continue;
      }
      const target = resolve(file, reference);
      used.add(target);
      if (!(target in files)) problems.push(`${file}: module ${symbol} refers to ${target}, which does not exist`);
    }
    for (const { fn, path } of loadedFiles(files[file]!)) {
      const target = resolve(file, path);
      used.add(target);
      if (!(target in files)) {
        problems.push(`${file}: ${fn}('${path}') refers to ${target}, which does not exist`);
        continue;
      }
      const limit = LOAD_LIMITS[fn];
      if (limit !== undefined && files[target]!.length > limit) {
        problems.push(`${file}: ${fn}('${path}') loads ${files[target]!.length} characters; Bicep stops at ${limit}`);
      }
    }
  }
  for (const file of paramFiles(files)) {
    const target = usingTarget(files[file]!);
    if (!target) problems.push(`${file}: no using '<template>' line`);
    else if (!(resolve(file, target) in files)) problems.push(`${file}: using '${target}', which does not exist`);
  }
  for (const file of bicepFiles(files)) {
    if (file.startsWith('modules/') && !used.has(file)) problems.push(`${file}: no template uses this module`);
  }
  return problems;
};

/** Every `param` of every template says what it is for. */
export const checkParameterDescriptions = (files: InfraFiles): string[] =>
  bicepFiles(files).flatMap((file) =>
    paramDeclarations(files[file]!)
      .filter((param) => !param.decorators.some((decorator) => /^@(sys\.)?description\(\s*'(?:[^'\\]|\\.)+'\s*\)$/.test(decorator)))
      .map((param) => `${file}:${param.line}: param ${param.name} has no @description`),
  );

/** Every resource type names a fixed API version. */
export const checkApiVersions = (files: InfraFiles): string[] =>
  bicepFiles(files).flatMap((file) =>
    resourceTypes(files[file]!)
      .filter(({ type }) => !PINNED_TYPE.test(type))
      .map(({ symbol, type }) => `${file}: resource ${symbol} '${type}' does not pin an API version (Type@yyyy-mm-dd[-preview])`),
  );

/** Calls that fetch keys at deployment time; checked in code, so a comment may name them. */
const KEY_FETCHING_CALLS: Array<[RegExp, string]> = [
  [/\blist[A-Z]\w*\s*\(/, 'calls an ARM list*() function (listKeys, listConnectionStrings, …): keys must not pass through templates'],
];

/** Secret values written out; checked everywhere, comments included. */
const SECRET_LITERALS: Array<[RegExp, string]> = [
  [/AccountKey=/i, 'holds a storage account key connection string'],
  [/SharedAccess(Key|Signature)=/i, 'holds a shared access key or signature'],
  [/[?&]sig=[A-Za-z0-9%]/, 'holds a SAS token'],
  [/InstrumentationKey=[0-9a-f]{8}-/i, 'holds an Application Insights key literal'],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'holds a PEM private key'],
  [/\b0x[0-9a-fA-F]{64}\b/, 'holds a 32-byte hex literal (an EVM private key?)'],
];

/**
 * A quoted token of 32+ characters that looks random: letters and digits mixed, from the base64 or
 * hex alphabet. Addresses (public), GUIDs (role ids) and kebab-case names are not keys.
 */
const looksLikeKey = (token: string) =>
  token.length >= 32 &&
  /^[A-Za-z0-9+/_=-]+$/.test(token) &&
  ((/[0-9]/.test(token) && /[A-Za-z]/.test(token)) || (/[a-z]/.test(token) && /[A-Z]/.test(token) && token.length >= 40)) &&
  !/^0x[0-9a-fA-F]{40}$/.test(token) &&
  !/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(token) &&
  !/^[a-z0-9]+(-[a-z0-9]+)+$/.test(token);

/** No keys fetched by the template, no secret values written in it, secure parameters fed from outside. */
export const checkNoSecrets = (files: InfraFiles): string[] => {
  const problems: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    // The OpenAPI documents are generated by `npm run build` and carry examples, not configuration.
    if (/^openapi\.[^/]*\.json$/.test(file)) continue;
    const code = file.endsWith('.bicep') || file.endsWith('.bicepparam') ? lex(text).code : text;
    code.split('\n').forEach((line, index) => {
      for (const [pattern, what] of KEY_FETCHING_CALLS) if (pattern.test(line)) problems.push(`${file}:${index + 1}: ${what}`);
    });
    text.split('\n').forEach((line, index) => {
      for (const [pattern, what] of SECRET_LITERALS) if (pattern.test(line)) problems.push(`${file}:${index + 1}: ${what}`);
      for (const match of line.matchAll(/(['"])([^'"\s]{32,})\1/g)) {
        if (looksLikeKey(match[2]!)) problems.push(`${file}:${index + 1}: holds a key-like literal (${match[2]!.slice(0, 6)}…)`);
      }
    });
  }
  const secureParams = new Map<string, Set<string>>();
  for (const file of bicepFiles(files)) {
    const secure = new Set<string>();
    for (const param of paramDeclarations(files[file]!)) {
      if (!param.decorators.some((decorator) => /^@(sys\.)?secure\(\)$/.test(decorator))) continue;
      secure.add(param.name);
      const fallback = /=\s*([\s\S]+)$/.exec(param.text)?.[1]?.trim();
      if (fallback !== undefined && fallback !== "''") problems.push(`${file}:${param.line}: secure param ${param.name} has a default value`);
    }
    secureParams.set(file, secure);
  }
  for (const file of paramFiles(files)) {
    const target = usingTarget(files[file]!);
    const secure = (target && secureParams.get(resolve(file, target))) || new Set<string>();
    for (const { name, value } of paramAssignments(files[file]!)) {
      if (secure.has(name) && !/^readEnvironmentVariable\(\s*'[A-Z0-9_]+'\s*(,\s*''\s*)?\)$/.test(value) && !/^(az\.)?getSecret\(/.test(value) && value !== "''") {
        problems.push(`${file}: secure param ${name} must come from readEnvironmentVariable() or getSecret(), not ${value}`);
      }
    }
  }
  return problems;
};

/** Each parameter file sets only parameters its template has, and every parameter without a default. */
export const checkParameterFiles = (files: InfraFiles): string[] => {
  const problems: string[] = [];
  for (const file of paramFiles(files)) {
    const target = usingTarget(files[file]!);
    const template = target && files[resolve(file, target)];
    if (!template) continue; // checkReferences reports it
    const declared = paramDeclarations(template);
    const assigned = new Set(paramAssignments(files[file]!).map((assignment) => assignment.name));
    for (const name of assigned) if (!declared.some((param) => param.name === name)) problems.push(`${file}: param ${name} is not a parameter of ${target}`);
    for (const param of declared) {
      if (!/=/.test(param.text) && !assigned.has(param.name)) problems.push(`${file}: required param ${param.name} of ${target} is not set`);
    }
  }
  return problems;
};

/** Every queue of the registry and its poison queue is created, through the storage module's queue loop. */
export const checkQueues = (files: InfraFiles, queues: readonly string[]): string[] => {
  const problems: string[] = [];
  const declared = stringArrayVariable(files['main.bicep'] ?? '', 'queueNames');
  if (!declared) return ['main.bicep: no var queueNames = [...]'];
  for (const queue of queues.flatMap((name) => [name, `${name}-poison`])) {
    if (!declared.includes(queue)) problems.push(`main.bicep: queue ${queue} is not in queueNames`);
  }
  const main = lex(files['main.bicep']!).code;
  if (!/module\s+\w+\s+'modules\/storage\.bicep'[\s\S]*?\bqueueNames:\s*queueNames\b/.test(main)) {
    problems.push('main.bicep: the storage module is not given queueNames');
  }
  const storage = lex(files['modules/storage.bicep'] ?? '').code;
  if (!/resource\s+\w+\s+'Microsoft\.Storage\/storageAccounts\/queueServices\/queues@[^']+'\s*=\s*\[\s*for\s+(\w+)\s+in\s+queueNames\s*:\s*\{[\s\S]*?name:\s*\1\b/.test(storage)) {
    problems.push('modules/storage.bicep: no queue resource created for each of queueNames');
  }
  return problems;
};

interface DeclaredContainer {
  name: string;
  partitionKey: string;
  uniqueKeys?: string[][];
  compositeIndexes?: Array<Array<{ path: string; order: string }>>;
  expiring?: boolean;
}

/** Every container of the registry, with its partition key, unique keys and composite indexes, is declared; no other. */
export const checkContainers = (files: InfraFiles, containers: readonly ContainerSpec[], databaseName: string): string[] => {
  const problems: string[] = [];
  let declared: DeclaredContainer[];
  try {
    declared = (JSON.parse(files['cosmos-containers.json'] ?? '') as { containers: DeclaredContainer[] }).containers;
  } catch (error) {
    return [`cosmos-containers.json: not JSON: ${(error as Error).message}`];
  }
  const byName = new Map(declared.map((container) => [container.name, container]));
  for (const expected of containers) {
    const actual = byName.get(expected.name);
    if (!actual) {
      problems.push(`cosmos-containers.json: container ${expected.name} (partition key ${expected.partitionKey}) is missing`);
      continue;
    }
    if (actual.partitionKey !== expected.partitionKey) {
      problems.push(`cosmos-containers.json: ${expected.name} is partitioned by ${actual.partitionKey}; the code uses ${expected.partitionKey}`);
    }
    if (JSON.stringify(actual.uniqueKeys ?? []) !== JSON.stringify(expected.uniqueKeys ?? [])) {
      problems.push(`cosmos-containers.json: ${expected.name} unique keys ${JSON.stringify(actual.uniqueKeys ?? [])} differ from ${JSON.stringify(expected.uniqueKeys ?? [])}`);
    }
    if (JSON.stringify(actual.compositeIndexes ?? []) !== JSON.stringify(expected.compositeIndexes ?? [])) {
      problems.push(`cosmos-containers.json: ${expected.name} composite indexes differ from shared/registry.ts`);
    }
    if (Boolean(actual.expiring) !== Boolean(expected.expiring)) {
      problems.push(`cosmos-containers.json: ${expected.name} ${expected.expiring ? 'needs' : 'must not have'} per-document TTL (expiring), as in shared/registry.ts`);
    }
  }
  for (const name of byName.keys()) if (!containers.some((container) => container.name === name)) problems.push(`cosmos-containers.json: ${name} is not in shared/registry.ts`);

  const main = lex(files['main.bicep'] ?? '').code;
  if (!/loadJsonContent\('cosmos-containers\.json'\)\.containers/.test(main)) problems.push('main.bicep: does not load cosmos-containers.json');
  if (!new RegExp(`\\bvar\\s+cosmosDatabaseName\\s*=\\s*'${databaseName}'`).test(main)) problems.push(`main.bicep: the database is not '${databaseName}'`);
  const cosmos = lex(files['modules/cosmos.bicep'] ?? '').code;
  for (const [pattern, what] of [
    [/\[\s*for\s+container\s+in\s+containers\s*:/, 'a container resource for each declared container'],
    [/paths:\s*\[\s*container\.partitionKey\s*\]/, 'the partition key'],
    [/uniqueKeys:\s*map\(container\.\?uniqueKeys/, 'the unique keys'],
    [/compositeIndexes:\s*container\.\?compositeIndexes/, 'the composite indexes'],
    [/defaultTtl:\s*\(container\.\?expiring\s*\?\?\s*false\)\s*\?\s*-1\s*:\s*null/, 'per-document TTL for expiring containers'],
  ] as const) {
    if (!pattern.test(cosmos)) problems.push(`modules/cosmos.bicep: does not declare ${what}`);
  }
  return problems;
};

/** The settings that keep keys out: shared-key and local auth off, RBAC Key Vault, identity-based app settings, one roles module. */
export const checkIdentityAndSettings = (files: InfraFiles): string[] => {
  const problems: string[] = [];
  const code = (file: string) => lex(files[file] ?? '').code;
  const require = (file: string, pattern: RegExp, what: string) => {
    if (!pattern.test(code(file))) problems.push(`${file}: ${what}`);
  };
  require('modules/storage.bicep', /allowSharedKeyAccess:\s*false\b/, 'shared-key access is not off (allowSharedKeyAccess: false)');
  require('modules/cosmos.bicep', /disableLocalAuth:\s*true\b/, 'Cosmos DB local auth is not off (disableLocalAuth: true)');
  require('modules/cosmos.bicep', /'EnableServerless'/, 'Cosmos DB is not serverless');
  require('modules/keyvault.bicep', /enableRbacAuthorization:\s*true\b/, 'Key Vault is not in RBAC mode');
  require('modules/monitoring.bicep', /DisableLocalAuth:\s*true\b/, 'Application Insights accepts keys (DisableLocalAuth: true)');

  const app = code('modules/functionapp.bicep');
  const settings = new Map([...app.matchAll(/\{\s*name:\s*'([A-Za-z0-9_]+)'\s*,\s*value:\s*([^}]*?)\s*\}/g)].map((match) => [match[1]!, match[2]!]));
  const required = [
    'AzureWebJobsStorage__accountName', 'AzureWebJobsStorage__credential', 'AzureWebJobsStorage__clientId', 'AzureWebJobsStorage__queueServiceUri',
    'AZURE_CLIENT_ID', 'APP_ENV', 'BASE_URL', 'BRAND_KEY', 'BRAND_NAME', 'COSMOS_ENDPOINT', 'COSMOS_DATABASE', 'CHAIN_RPC_URL', 'CHAIN_NETWORK',
    'USDC_ADDRESS', 'USDT_ADDRESS', 'SPLIT_FACTORY_ADDRESS', 'PLATFORM_WALLET', 'ADMIN_WALLETS', 'KEY_ISSUER', 'AZURE_SUBSCRIPTION_ID',
    'APIM_RESOURCE_GROUP', 'APIM_SERVICE_NAME', 'APPLICATIONINSIGHTS_CONNECTION_STRING', 'JWT_SECRET', 'DATA_ENCRYPTION_KEY', 'RELAYER_PRIVATE_KEY', 'RECEIPT_SIGNING_KEY', 'RECEIPT_SIGNERS_RETIRED', 'EDGE_SECRET',
  ];
  for (const name of required) if (!settings.has(name)) problems.push(`modules/functionapp.bicep: app setting ${name} is missing`);
  for (const name of ['COSMOS_KEY', 'AzureWebJobsStorage']) if (settings.has(name)) problems.push(`modules/functionapp.bicep: app setting ${name} must not exist (identity-based access)`);
  const expectations: Array<[string, RegExp]> = [
    ['AzureWebJobsStorage__credential', /^'managedidentity'$/],
    ['AzureWebJobsStorage__clientId', /^identityClientId$/],
    ['AZURE_CLIENT_ID', /^identityClientId$/],
    ['APP_ENV', /^'production'$/],
    ['KEY_ISSUER', /^'apim'$/],
    ['JWT_SECRET', /^keyVaultReference\.\w+$/],
    ['DATA_ENCRYPTION_KEY', /^keyVaultReference\.\w+$/],
    ['RELAYER_PRIVATE_KEY', /^keyVaultReference\.\w+$/],
    ['RECEIPT_SIGNING_KEY', /^keyVaultReference\.\w+$/],
    ['RECEIPT_SIGNERS_RETIRED', /^receiptSignersRetired$/],
    ['EDGE_SECRET', /^keyVaultReference\.\w+$/],
  ];
  for (const [name, pattern] of expectations) {
    const value = settings.get(name);
    if (value !== undefined && !pattern.test(value)) problems.push(`modules/functionapp.bicep: app setting ${name} is ${value}, expected ${pattern}`);
  }
  const references = [...app.matchAll(/(\w+):\s*'@Microsoft\.KeyVault\(SecretUri=\$\{keyVaultUri\}secrets\/\$\{secretNames\.\w+\}\/\)'/g)].map((match) => match[1]!);
  for (const name of ['jwtSecret', 'dataEncryptionKey', 'relayerPrivateKey', 'receiptSigningKey', 'edgeSecret']) {
    if (!references.includes(name)) problems.push(`modules/functionapp.bicep: ${name} is not a Key Vault reference (@Microsoft.KeyVault(SecretUri=...))`);
  }
  require('modules/functionapp.bicep', /keyVaultReferenceIdentity:\s*identityResourceId\b/, 'Key Vault references do not use the user-assigned identity');
  require('modules/functionapp.bicep', /tier:\s*'FlexConsumption'/, 'the plan is not Flex Consumption');
  require('modules/functionapp.bicep', /runtime:\s*\{\s*name:\s*'node'\s*,?\s*version:\s*'22'\s*,?\s*\}/, 'the runtime is not Node 22');
  if (!/Node 20/.test(files['modules/functionapp.bicep'] ?? '')) problems.push('modules/functionapp.bicep: no comment says the code also runs on Node 20');

  const roleGuids = {
    'Storage Queue Data Contributor': '974c5e8b-45b9-4653-ba55-5f855dd0fb88',
    'Storage Blob Data Owner': 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b',
    'Key Vault Secrets User': '4633458b-17de-408a-b874-0445c86b69e6',
    'Monitoring Metrics Publisher': '3913510d-42f4-4e42-8a64-420c390055eb',
    'Cosmos DB Built-in Data Contributor': '00000000-0000-0000-0000-000000000002',
  };
  const roles = code('modules/roles.bicep');
  for (const [role, guid] of Object.entries(roleGuids)) {
    if (!new RegExp(`(\\w+:|\\bvar\\s+\\w+\\s*=)\\s*'${guid}'`).test(roles)) problems.push(`modules/roles.bicep: ${role} (${guid}) is not a named role definition`);
  }
  if (!/'Microsoft\.DocumentDB\/databaseAccounts\/sqlRoleAssignments@/.test(roles)) problems.push('modules/roles.bicep: no Cosmos DB SQL role assignment');
  for (const file of bicepFiles(files)) {
    if (file === 'modules/roles.bicep') continue;
    for (const { type } of resourceTypes(files[file]!)) {
      if (/^Microsoft\.Authorization\/role(Assignments|Definitions)@|\/sqlRoleAssignments@/.test(type)) problems.push(`${file}: ${type.split('@')[0]} outside modules/roles.bicep`);
    }
  }
  return problems;
};

/** Products a new API Management instance may come with; the template must not take them over. */
const BUILT_IN_PRODUCTS = ['starter', 'unlimited'];

/**
 * The gateway: the generated documents imported, subscription required per API and product, each plan
 * in the product the key issuer uses for it (never a built-in product's id), with the plan's quota.
 */
export const checkGateway = (files: InfraFiles, planQuotas: Record<string, number>, productOfPlan: Record<string, string>): string[] => {
  const problems: string[] = [];
  const apim = lex(files['modules/apim.bicep'] ?? '').code;
  for (const document of ['openapi.keyed.json', 'openapi.keyless.json']) {
    if (!new RegExp(`loadJsonContent\\('\\.\\./${document.replace(/\./g, '\\.')}'\\)`).test(apim)) problems.push(`modules/apim.bicep: does not import ${document}`);
  }
  if (!/format:\s*'openapi\+json'/.test(apim)) problems.push('modules/apim.bicep: the API is not imported from OpenAPI');
  const resources = statements(files['modules/apim.bicep'] ?? '').filter((statement) => statement.text.startsWith('resource '));
  const ofType = (type: string) => resources.filter((statement) => statement.text.includes(`'Microsoft.ApiManagement/service/${type}@`));
  const apis = ofType('apis');
  if (apis.length !== 1 || !/subscriptionRequired:\s*true\b/.test(apis[0]!.text)) problems.push('modules/apim.bicep: the API does not require a subscription');
  if (ofType('apis/operations').some((operation) => /subscriptionRequired/.test(operation.text))) {
    problems.push('modules/apim.bicep: subscription requirement set on an operation');
  }
  const plans = literalVariable(files['modules/apim.bicep'] ?? '', 'plans');
  const entries = Array.isArray(plans) ? (plans as Array<Record<string, BicepValue>>) : [];
  if (!entries.length) problems.push('modules/apim.bicep: no var plans = [ { plan, product, displayName, callsPerMinute } ... ] it can read');
  for (const [plan, calls] of Object.entries(planQuotas)) {
    const entry = entries.find((candidate) => candidate.plan === plan);
    if (!entry) {
      problems.push(`modules/apim.bicep: plan ${plan} has no product`);
      continue;
    }
    if (entry.product !== productOfPlan[plan]) problems.push(`modules/apim.bicep: plan ${plan} is in product ${String(entry.product)}; the key issuer uses ${productOfPlan[plan]}`);
    if (entry.callsPerMinute !== calls) problems.push(`modules/apim.bicep: plan ${plan} does not carry ${calls} calls a minute`);
  }
  for (const entry of entries) {
    if (BUILT_IN_PRODUCTS.includes(String(entry.product))) problems.push(`modules/apim.bicep: product ${String(entry.product)} is a product API Management may already have`);
    // Display names are unique within a service: "Starter" would clash with the built-in product.
    if ([...BUILT_IN_PRODUCTS, ...Object.keys(planQuotas)].includes(String(entry.displayName).toLowerCase())) {
      problems.push(`modules/apim.bicep: product ${String(entry.product)} has the display name ${String(entry.displayName)}, which another product may already have`);
    }
  }
  if (!/for\s+plan\s+in\s+plans:\s*\{\s*parent:\s*service\s*name:\s*plan\.product\b/.test(apim)) problems.push('modules/apim.bicep: the plan products are not named plan.product');
  if (!/for\s+plan\s+in\s+plans:[\s\S]*?subscriptionRequired:\s*true\b/.test(apim)) problems.push('modules/apim.bicep: the plan products do not require a subscription');
  if (!/replace\(loadTextContent\('\.\.\/policies\/product-plan\.xml'\),\s*'__CALLS_PER_MINUTE__',\s*string\(plan\.callsPerMinute\)\)/.test(apim)) {
    problems.push('modules/apim.bicep: the plan products do not get their quota policy');
  }
  const open = ofType('products').find((product) => /\bname:\s*'public'/.test(product.text));
  if (!open || !/subscriptionRequired:\s*false\b/.test(open.text)) problems.push('modules/apim.bicep: no open product "public" (subscriptionRequired: false) for the keyless routes');
  if (!/urlTemplate:\s*'\/\*'/.test(apim)) problems.push('modules/apim.bicep: no catch-all operation for unknown routes');
  return problems;
};

/** The generated documents can be merged into one API: OpenAPI 3, normalized unique operation ids, no route in both. */
export const checkOpenApiDocuments = (files: InfraFiles): string[] => {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  const ids = new Map<string, string>();
  for (const file of ['openapi.keyed.json', 'openapi.keyless.json']) {
    let document: { openapi?: string; info?: { version?: string }; paths?: Record<string, Record<string, { operationId?: string }>> };
    try {
      document = JSON.parse(files[file] ?? '') as typeof document;
    } catch {
      problems.push(`${file}: missing or not JSON (npm run build writes it)`);
      continue;
    }
    if (!/^3\./.test(document.openapi ?? '')) problems.push(`${file}: not an OpenAPI 3 document`);
    if (!document.info?.version) problems.push(`${file}: no info.version`);
    for (const [path, operations] of Object.entries(document.paths ?? {})) {
      for (const [method, operation] of Object.entries(operations)) {
        const route = `${method.toUpperCase()} ${path}`;
        if (seen.has(route)) problems.push(`${file}: ${route} is also in ${seen.get(route)}; one API cannot hold it twice`);
        seen.set(route, file);
        const id = operation.operationId ?? '';
        // API Management names an imported operation after its operationId, normalized; the policies
        // look operations up by that name, so the ids must already be in normalized form.
        if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(id) || id.length > 76) problems.push(`${file}: ${route} operationId '${id}' is not in API Management's normalized form`);
        if (ids.has(id)) problems.push(`${file}: operationId ${id} is also used in ${ids.get(id)}`);
        ids.set(id, file);
      }
    }
  }
  return problems;
};

interface ModuleDeclaration {
  symbol: string;
  /** The module file, relative to infra/ (registry references as written). */
  target: string;
  /** The bool parameter of `= if (<condition>)`, when the module is conditional. */
  condition?: string;
  text: string;
}

const moduleDeclarations = (files: InfraFiles, file: string): ModuleDeclaration[] =>
  statements(files[file] ?? '')
    .map((statement) => ({ statement, match: /^module\s+(\w+)\s+'([^']+)'\s*=\s*(?:if\s*\(\s*([^)]*?)\s*\)\s*)?\{/.exec(statement.text) }))
    .filter((entry): entry is { statement: (typeof entry)['statement']; match: RegExpExecArray } => entry.match !== null)
    .map(({ statement, match }) => ({
      symbol: match[1]!,
      target: match[2]!.startsWith('br') ? match[2]! : resolve(file, match[2]!),
      condition: match[3],
      text: statement.text,
    }));

const HOST_KEY_TYPE = /'Microsoft\.Web\/sites\/host\/functionKeys@/;

/**
 * The Functions host key is written only in the gateway step: by a module main.bicep deploys under a
 * bool parameter (default true) that the parameter files read from DEPLOY_GATEWAY, never on a run that
 * creates the Function App before its code. API Management's configuration comes in the same step.
 */
export const checkGatewayStep = (files: InfraFiles): string[] => {
  const problems: string[] = [];
  const modules = moduleDeclarations(files, 'main.bicep');
  const writers = bicepFiles(files).filter((file) => HOST_KEY_TYPE.test(lex(files[file]!).code));
  if (!writers.length) problems.push('no template writes the Functions host key API Management uses (Microsoft.Web/sites/host/functionKeys)');
  const conditions = new Set<string>();
  for (const file of writers) {
    const module = modules.find((candidate) => candidate.target === file);
    if (file === 'main.bicep' || !module?.condition) {
      problems.push(`${file}: the host key is written on every run, also on the first, before the Function App has code (write it in a module main.bicep deploys only in the gateway step)`);
    } else conditions.add(module.condition);
  }
  const [condition] = [...conditions];
  if (conditions.size > 1) problems.push(`main.bicep: the host key modules depend on different conditions (${[...conditions].join(', ')})`);
  if (!condition) return problems;
  const param = paramDeclarations(files['main.bicep'] ?? '').find((declaration) => declaration.name === condition);
  if (!param || !/^param\s+\w+\s+bool\s*=\s*true$/.test(param.text)) problems.push(`main.bicep: the gateway step's condition ${condition} is not a bool parameter defaulting to true`);
  const apim = modules.find((module) => module.target === 'modules/apim.bicep');
  if (!apim || apim.condition !== condition) problems.push(`main.bicep: API Management's configuration (modules/apim.bicep) is not deployed under ${condition} with the host key`);
  for (const file of paramFiles(files)) {
    const assignment = paramAssignments(files[file]!).find((candidate) => candidate.name === condition);
    if (!assignment || !/^bool\(\s*readEnvironmentVariable\(\s*'DEPLOY_GATEWAY'\s*,\s*'true'\s*\)\s*\)$/.test(assignment.value)) {
      problems.push(`${file}: param ${condition} is not bool(readEnvironmentVariable('DEPLOY_GATEWAY', 'true'))`);
    }
  }
  return problems;
};

/**
 * The outputs operators read (infra/README.md) exist, and none comes from a module of the gateway
 * step: the first step's deployment has to carry them all.
 */
export const checkOutputs = (files: InfraFiles): string[] => {
  const problems: string[] = [];
  const conditional = moduleDeclarations(files, 'main.bicep').filter((module) => module.condition).map((module) => module.symbol);
  const outputs = new Map(
    statements(files['main.bicep'] ?? '')
      .map((statement) => /^output\s+(\w+)\s+\w+\s*=\s*([\s\S]+)$/.exec(statement.text))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => [match[1]!, match[2]!.trim()]),
  );
  const expected: Array<[string, RegExp | undefined]> = [
    ['baseUrl', undefined],
    ['gatewayUrl', /^apimService\.outputs\.gatewayUrl$/],
    ['functionAppName', /^functionApp\.outputs\.name$/],
    ['functionAppHostName', /^functionApp\.outputs\.defaultHostName$/],
    ['keyVaultName', undefined],
    ['apimServiceName', undefined],
  ];
  for (const [name, pattern] of expected) {
    const value = outputs.get(name);
    if (value === undefined) problems.push(`main.bicep: no output ${name}`);
    else if (pattern && !pattern.test(value)) problems.push(`main.bicep: output ${name} is ${value}, expected ${pattern}`);
  }
  for (const [name, value] of outputs) {
    const symbol = conditional.find((candidate) => new RegExp(`\\b${candidate}\\.outputs\\b`).test(value));
    if (symbol) problems.push(`main.bicep: output ${name} comes from ${symbol}, which the first step does not deploy`);
  }
  return problems;
};

type Masking = { value?: BicepValue; mode?: BicepValue };

/**
 * API Management's telemetry masks the subscription-key query parameter and hides the key and edge
 * headers, in Application Insights and in the gateway logs (the azuremonitor diagnostic), and logs no
 * headers or bodies.
 */
export const checkDiagnostics = (files: InfraFiles): string[] => {
  const problems: string[] = [];
  const source = files['modules/apim.bicep'] ?? '';
  const diagnostics = statements(source)
    .filter((statement) => statement.text.includes("'Microsoft.ApiManagement/service/diagnostics@"))
    .map((statement) => ({ name: /\bname:\s*'([^']+)'/.exec(statement.text)?.[1] ?? '?', text: statement.text }));
  for (const name of ['applicationinsights', 'azuremonitor']) {
    if (!diagnostics.some((diagnostic) => diagnostic.name === name)) problems.push(`modules/apim.bicep: no ${name} diagnostic`);
  }
  const azureMonitor = diagnostics.find((diagnostic) => diagnostic.name === 'azuremonitor');
  const loggers = statements(source).filter((statement) => statement.text.includes("'Microsoft.ApiManagement/service/loggers@"));
  const builtIn = loggers.find((statement) => /\bname:\s*'azuremonitor'/.test(statement.text) && /loggerType:\s*'azureMonitor'/.test(statement.text));
  const builtInSymbol = builtIn && /^resource\s+(\w+)/.exec(builtIn.text)?.[1];
  if (azureMonitor && (!builtInSymbol || !new RegExp(`loggerId:\\s*${builtInSymbol}\\.id\\b`).test(azureMonitor.text))) {
    problems.push("modules/apim.bicep: the azuremonitor diagnostic does not use the service's azuremonitor logger");
  }
  for (const diagnostic of diagnostics) {
    const variable = /\bproperties:\s*union\(\s*(\w+)\s*,/.exec(diagnostic.text)?.[1];
    const messages = variable ? literalVariable(source, variable) : undefined;
    const where = `modules/apim.bicep: diagnostic ${diagnostic.name}`;
    if (!messages || typeof messages !== 'object' || Array.isArray(messages)) {
      problems.push(`${where} does not take its frontend and backend settings from a var this check can read (properties: union(<var>, {...}))`);
      continue;
    }
    for (const side of ['frontend', 'backend']) {
      for (const direction of ['request', 'response']) {
        const message = (messages as Record<string, Record<string, Record<string, BicepValue>>>)[side]?.[direction];
        const body = message?.body as { bytes?: BicepValue } | undefined;
        if (!message || !Array.isArray(message.headers) || message.headers.length !== 0 || body?.bytes !== 0) {
          problems.push(`${where}: ${side} ${direction} logs headers or a body`);
        }
      }
      const masking = (messages as Record<string, Record<string, Record<string, BicepValue>>>)[side]?.request?.dataMasking as
        | { queryParams?: Masking[]; headers?: Masking[] }
        | undefined;
      const masked = (list: Masking[] | undefined, value: string, modes: string[]) =>
        (list ?? []).some((entry) => String(entry.value).toLowerCase() === value.toLowerCase() && modes.includes(String(entry.mode)));
      if (!masked(masking?.queryParams, 'subscription-key', ['Mask', 'Hide'])) problems.push(`${where}: ${side} request does not mask the subscription-key query parameter`);
      for (const header of ['Ocp-Apim-Subscription-Key', 'x-api-key', 'x-edge-secret']) {
        if (!masked(masking?.headers, header, ['Hide', 'Mask'])) problems.push(`${where}: ${side} request does not hide the ${header} header`);
      }
    }
  }
  return problems;
};

/**
 * The abuse limits: keylessCallsPerMinute feeds both API Management's named value and the app setting
 * KEYLESS_RATE_LIMIT_PER_MINUTE; x402CallsPerMinute likewise the named value x402-calls-per-minute and
 * X402_RATE_LIMIT_PER_MINUTE, applied to the operations of the named value x402-operations, which is
 * derived from the keyless document's x402 operations; splitDeployDailyBudget the app setting
 * SPLIT_DEPLOY_DAILY_BUDGET.
 */
export const checkAbuseLimits = (files: InfraFiles, defaults: { keylessCallsPerMinute: number; x402CallsPerMinute: number; splitDeployDailyBudget: number }): string[] => {
  const problems: string[] = [];
  const params = paramDeclarations(files['main.bicep'] ?? '');
  for (const [name, value] of Object.entries(defaults)) {
    const param = params.find((declaration) => declaration.name === name);
    if (!param || !new RegExp(`^param\\s+${name}\\s+int\\s*=\\s*${value}$`).test(param.text)) problems.push(`main.bicep: no param ${name} int = ${value}`);
  }
  const modules = moduleDeclarations(files, 'main.bicep');
  const passes = (target: string, name: string) => !!modules.find((module) => module.target === target && new RegExp(`\\b${name}:\\s*${name}\\b`).test(module.text));
  for (const [target, name] of [
    ['modules/functionapp.bicep', 'keylessCallsPerMinute'],
    ['modules/functionapp.bicep', 'x402CallsPerMinute'],
    ['modules/functionapp.bicep', 'splitDeployDailyBudget'],
    ['modules/apim.bicep', 'keylessCallsPerMinute'],
    ['modules/apim.bicep', 'x402CallsPerMinute'],
  ] as const) {
    if (!passes(target, name)) problems.push(`main.bicep: ${target} is not given ${name}`);
  }
  const app = lex(files['modules/functionapp.bicep'] ?? '').code;
  for (const [setting, param] of [
    ['KEYLESS_RATE_LIMIT_PER_MINUTE', 'keylessCallsPerMinute'],
    ['X402_RATE_LIMIT_PER_MINUTE', 'x402CallsPerMinute'],
    ['SPLIT_DEPLOY_DAILY_BUDGET', 'splitDeployDailyBudget'],
  ] as const) {
    if (!new RegExp(`\\{\\s*name:\\s*'${setting}'\\s*,\\s*value:\\s*string\\(\\s*${param}\\s*\\)\\s*\\}`).test(app)) {
      problems.push(`modules/functionapp.bicep: app setting ${setting} is not string(${param})`);
    }
  }
  const apim = lex(files['modules/apim.bicep'] ?? '').code;
  if (!/name:\s*'keyless-calls-per-minute'[\s\S]*?value:\s*string\(\s*keylessCallsPerMinute\s*\)/.test(apim)) {
    problems.push("modules/apim.bicep: the named value keyless-calls-per-minute is not string(keylessCallsPerMinute)");
  }
  if (!/name:\s*'x402-calls-per-minute'[\s\S]*?value:\s*string\(\s*x402CallsPerMinute\s*\)/.test(apim)) {
    problems.push('modules/apim.bicep: the named value x402-calls-per-minute is not string(x402CallsPerMinute)');
  }
  const operations = statements(files['modules/apim.bicep'] ?? '').find((statement) => /^var\s+x402OperationIds\s*=/.test(statement.text))?.text.replace(/\s+/g, ' ') ?? '';
  if (!/items\(keylessDocument\.paths\)/.test(operations) || !/operation\.value\['x-auth'\]\.kind == 'x402'/.test(operations) || !/operation\.value\.operationId/.test(operations)) {
    problems.push("modules/apim.bicep: var x402OperationIds is not the operation ids of the keyless document's x402 operations (x-auth kind x402)");
  }
  if (!/name:\s*'x402-operations'[\s\S]*?value:\s*'\|\$\{join\(x402OperationIds, '\|'\)\}\|'/.test(apim)) {
    problems.push("modules/apim.bicep: the named value x402-operations is not '|' + the x402 operation ids joined by '|' + '|'");
  }
  return problems;
};

/**
 * With an edge proxy the first run can create the edge secret itself: EDGE_SECRET is a secure
 * parameter written into the vault the run creates, the gateway's role on it waits for the vault
 * module, and nothing tells the operator the secret must exist beforehand.
 */
export const checkEdgeSecretFirstRun = (files: InfraFiles): string[] => {
  const problems: string[] = [];
  const modules = moduleDeclarations(files, 'main.bicep');
  const vault = modules.find((module) => module.target === 'modules/keyvault.bicep');
  if (!vault || !/\bedgeSecret:\s*edgeSecret\b/.test(vault.text)) problems.push('main.bicep: the Key Vault module is not given edgeSecret');
  const roles = modules.find((module) => module.target === 'modules/roles.bicep');
  if (!roles || !vault || !new RegExp(`gatewaySecretNames:[\\s\\S]*\\b${vault.symbol}\\.outputs\\.secretNames\\.edgeSecret\\b`).test(roles.text)) {
    problems.push("main.bicep: the gateway's role on edge-secret does not wait for the Key Vault module that writes it");
  }
  const keyVault = lex(files['modules/keyvault.bicep'] ?? '').code;
  if (!/'Microsoft\.KeyVault\/vaults\/secrets@[^']+'\s*=\s*(if\s*\(.*?\)\s*)?\{\s*parent:\s*vault\s*name:\s*secretNames\.edgeSecret\s*properties:\s*\{\s*value:\s*edgeSecret\b/.test(keyVault)) {
    problems.push('modules/keyvault.bicep: edgeSecret is not written as the secret secretNames.edgeSecret');
  }
  for (const file of paramFiles(files)) {
    const assignments = paramAssignments(files[file]!);
    const edge = assignments.find((assignment) => assignment.name === 'edgeProxyEnabled')?.value === 'true';
    const secret = assignments.find((assignment) => assignment.name === 'edgeSecret')?.value ?? '';
    if (edge && !/^readEnvironmentVariable\(\s*'EDGE_SECRET'/.test(secret)) problems.push(`${file}: an edge proxy, but edgeSecret is not read from EDGE_SECRET`);
  }
  for (const file of ['main.bicep', ...paramFiles(files)]) {
    (files[file] ?? '').split('\n').forEach((line, index) => {
      if (/must exist (first|before)/i.test(line)) problems.push(`${file}:${index + 1}: says a secret must exist before the deployment; the first run writes it`);
    });
  }
  return problems;
};

/**
 * The app's secrets (JWT_SECRET, DATA_ENCRYPTION_KEY, RELAYER_PRIVATE_KEY, RECEIPT_SIGNING_KEY, the Stripe secrets), all the same way: a secure
 * parameter read from the environment variable of the same name (empty leaves the secret as it is),
 * written into Key Vault by the vault module, referenced (not copied) by the app setting, and out of
 * the gateway identity's reach.
 */
export const APP_SECRETS = [
  { param: 'jwtSecret', setting: 'JWT_SECRET', secret: 'jwt-secret' },
  { param: 'dataEncryptionKey', setting: 'DATA_ENCRYPTION_KEY', secret: 'data-encryption-key' },
  { param: 'relayerPrivateKey', setting: 'RELAYER_PRIVATE_KEY', secret: 'relayer-private-key' },
  { param: 'receiptSigningKey', setting: 'RECEIPT_SIGNING_KEY', secret: 'receipt-signing-key' },
  { param: 'stripeSecretKey', setting: 'STRIPE_SECRET_KEY', secret: 'stripe-secret-key' },
  { param: 'stripeWebhookSecret', setting: 'STRIPE_WEBHOOK_SECRET', secret: 'stripe-webhook-secret' },
] as const;

export const checkAppSecrets = (files: InfraFiles): string[] => {
  const problems: string[] = [];
  const main = paramDeclarations(files['main.bicep'] ?? '');
  const modules = moduleDeclarations(files, 'main.bicep');
  const vaultModule = modules.find((module) => module.target === 'modules/keyvault.bicep');
  const roles = modules.find((module) => module.target === 'modules/roles.bicep');
  const secretNames = literalVariable(files['modules/keyvault.bicep'] ?? '', 'secretNames') as Record<string, BicepValue> | undefined;
  const vault = lex(files['modules/keyvault.bicep'] ?? '').code;
  const app = lex(files['modules/functionapp.bicep'] ?? '').code;
  for (const { param, setting, secret } of APP_SECRETS) {
    const declared = main.find((declaration) => declaration.name === param);
    if (!declared || !declared.decorators.some((decorator) => /^@(sys\.)?secure\(\)$/.test(decorator)) || !new RegExp(`^param\\s+${param}\\s+string\\s*=\\s*''$`).test(declared.text)) {
      problems.push(`main.bicep: no @secure() param ${param} string = '' (${setting})`);
    }
    if (!vaultModule || !new RegExp(`\\b${param}:\\s*${param}\\b`).test(vaultModule.text)) problems.push(`main.bicep: the Key Vault module is not given ${param}`);
    if (secretNames?.[param] !== secret) problems.push(`modules/keyvault.bicep: secretNames.${param} is not '${secret}'`);
    const written = new RegExp(
      `'Microsoft\\.KeyVault/vaults/secrets@[^']+'\\s*=\\s*if\\s*\\(\\s*!empty\\(\\s*${param}\\s*\\)\\s*\\)\\s*\\{\\s*parent:\\s*vault\\s*name:\\s*secretNames\\.${param}\\s*properties:\\s*\\{\\s*value:\\s*${param}\\b`,
    );
    if (!written.test(vault)) problems.push(`modules/keyvault.bicep: ${param} is not written as the secret secretNames.${param} (when given)`);
    if (!new RegExp(`\\b${param}:\\s*'@Microsoft\\.KeyVault\\(SecretUri=\\$\\{keyVaultUri\\}secrets/\\$\\{secretNames\\.${param}\\}/\\)'`).test(app)) {
      problems.push(`modules/functionapp.bicep: keyVaultReference.${param} is not a Key Vault reference to secretNames.${param}`);
    }
    if (!new RegExp(`\\{\\s*name:\\s*'${setting}'\\s*,\\s*value:\\s*keyVaultReference\\.${param}\\s*\\}`).test(app)) {
      problems.push(`modules/functionapp.bicep: app setting ${setting} is not keyVaultReference.${param}`);
    }
    if (roles && new RegExp(`gatewaySecretNames:[\\s\\S]*\\bsecretNames\\.${param}\\b`).test(roles.text)) {
      problems.push(`main.bicep: the gateway identity may read ${secret}; only the app needs it`);
    }
    for (const file of paramFiles(files)) {
      const value = paramAssignments(files[file]!).find((assignment) => assignment.name === param)?.value;
      if (value !== `readEnvironmentVariable('${setting}', '')`) problems.push(`${file}: param ${param} is not readEnvironmentVariable('${setting}', '')`);
    }
  }
  return problems;
};

/**
 * The payment settings: each an app setting fed from a main.bicep parameter of its own, through the
 * Function App module. `network` names the chain (CHAIN_NETWORK), whose preset in the app fills in the
 * `override` ones unless a parameter gives one (empty, or 0 for a number, keeps the network's); the
 * `app` ones default to the app's own defaults.
 */
export const PAYMENT_SETTINGS = [
  { setting: 'CHAIN_NETWORK', param: 'chainNetwork', type: 'string', kind: 'network' },
  { setting: 'USDC_ADDRESS', param: 'usdcAddress', type: 'string', kind: 'override' },
  { setting: 'USDT_ADDRESS', param: 'usdtAddress', type: 'string', kind: 'override' },
  { setting: 'ETH_USD_FEED_ADDRESS', param: 'ethUsdFeedAddress', type: 'string', kind: 'override' },
  { setting: 'FEED_HEARTBEAT_SECONDS', param: 'feedHeartbeatSeconds', type: 'int', kind: 'override' },
  { setting: 'CHAIN_CONFIRMATIONS', param: 'chainConfirmations', type: 'int', kind: 'override' },
  { setting: 'CHAIN_EXPLORER_URL', param: 'chainExplorerUrl', type: 'string', kind: 'override' },
  { setting: 'QUOTE_LOCK_SECONDS', param: 'quoteLockSeconds', type: 'int', kind: 'app' },
  { setting: 'RECEIPT_EXPIRY_SECONDS', param: 'receiptExpirySeconds', type: 'int', kind: 'app' },
  { setting: 'PAYMENT_SLIPPAGE_BPS', param: 'paymentSlippageBps', type: 'int', kind: 'app' },
  { setting: 'WATCH_BLOCK_RANGE', param: 'watchBlockRange', type: 'int', kind: 'app' },
  { setting: 'PORTAL_RATE_LIMIT_PER_MINUTE', param: 'portalCallsPerMinute', type: 'int', kind: 'app' },
  { setting: 'X402_FACILITATOR_URL', param: 'x402FacilitatorUrl', type: 'string', kind: 'app' },
  // The relayer's gas rules: what it settles, distributes and sweeps a day, and the amounts worth its gas.
  { setting: 'SETTLEMENT_DAILY_BUDGET', param: 'settlementDailyBudget', type: 'int', kind: 'app' },
  { setting: 'DISTRIBUTION_DAILY_BUDGET', param: 'distributionDailyBudget', type: 'int', kind: 'app' },
  { setting: 'SWEEP_DAILY_BUDGET', param: 'sweepDailyBudget', type: 'int', kind: 'app' },
  { setting: 'X402_MIN_ORDER_USDC', param: 'x402MinOrderUsdc', type: 'int', kind: 'app' },
  { setting: 'DISTRIBUTE_MIN_USDC', param: 'distributeMinUsdc', type: 'int', kind: 'app' },
  { setting: 'DISTRIBUTE_MIN_USDT', param: 'distributeMinUsdt', type: 'int', kind: 'app' },
  { setting: 'DISTRIBUTE_MIN_ETH_WEI', param: 'distributeMinEthWei', type: 'int', kind: 'app' },
] as const;

/** What the service must end up with on a network: its chain id, tokens (empty: none), the ETH/USD feed and that feed's heartbeat, the explorer. */
export interface KnownChain {
  name: string;
  chainId: number;
  usdcAddress: string;
  usdtAddress: string;
  ethUsdFeedAddress: string;
  /** Seconds between the feed's updates at the most (Chainlink's heartbeat). */
  feedHeartbeat: number;
  chainExplorerUrl: string;
}

export interface PaymentExpectations {
  /** Network name → what the app must run with there. main.bicep's default is `defaultNetwork`. */
  chains: Record<string, KnownChain>;
  defaultNetwork: string;
  /** The app's defaults (shared/config.ts) of the `app` settings, by parameter. */
  appDefaults: Record<string, number>;
  /** The app's configuration from these settings, as it would run, or its problems (none when the app would start). */
  load: (env: Record<string, string>) => { config?: Record<string, unknown>; problems: string[] };
}

/** A literal parameter value (`'text'`, a number, a bool), or undefined for an expression. */
const literalOf = (text: string | undefined): string | number | boolean | undefined => {
  if (text === undefined) return undefined;
  const value = text.trim();
  if (/^'(?:[^'\\$]|\\.)*'$/.test(value)) return value.slice(1, -1).replace(/\\(.)/g, '$1');
  if (/^-?\d+$/.test(value)) return Number(value);
  if (value === 'true' || value === 'false') return value === 'true';
  return undefined;
};

const defaultOf = (declaration: { text: string } | undefined) => literalOf(/=\s*([\s\S]+)$/.exec(declaration?.text ?? '')?.[1]);

/** The values an `@allowed([...])` decorator lists. */
const allowedOf = (declaration: { decorators: string[] } | undefined) => {
  const allowed = declaration?.decorators.find((decorator) => decorator.startsWith('@allowed('));
  return allowed === undefined ? undefined : [...allowed.matchAll(/'([^']*)'/g)].map((match) => match[1]!);
};

export const checkPaymentSettings = (files: InfraFiles, expected: PaymentExpectations): string[] => {
  const problems: string[] = [];
  const main = paramDeclarations(files['main.bicep'] ?? '');
  const module = paramDeclarations(files['modules/functionapp.bicep'] ?? '');
  const functionApp = moduleDeclarations(files, 'main.bicep').find((candidate) => candidate.target === 'modules/functionapp.bicep');
  const app = lex(files['modules/functionapp.bicep'] ?? '').code;
  const settings = new Map([...app.matchAll(/\{\s*name:\s*'([A-Za-z0-9_]+)'\s*,\s*value:\s*([^}]*?)\s*\}/g)].map((match) => [match[1]!, match[2]!]));

  // Parameter → setting, all the way through; an override of a number sends 0 as unset.
  for (const { setting, param, type, kind } of PAYMENT_SETTINGS) {
    const declared = main.find((declaration) => declaration.name === param);
    if (!declared) problems.push(`main.bicep: no param ${param} (${setting})`);
    else if (!new RegExp(`^param\\s+${param}\\s+${type}\\s*=`).test(declared.text)) problems.push(`main.bicep: param ${param} is not a ${type} with a default`);
    if (!module.some((declaration) => declaration.name === param)) problems.push(`modules/functionapp.bicep: no param ${param} (${setting})`);
    if (!functionApp || !new RegExp(`\\b${param}:\\s*${param}\\b`).test(functionApp.text)) problems.push(`main.bicep: modules/functionapp.bicep is not given ${param}`);
    const value = settings.get(setting);
    const wanted = type === 'int' ? (kind === 'override' ? `${param}==0?'':string(${param})` : `string(${param})`) : param;
    if (value === undefined) problems.push(`modules/functionapp.bicep: app setting ${setting} is missing`);
    else if (value.replace(/\s+/g, '') !== wanted) problems.push(`modules/functionapp.bicep: app setting ${setting} is ${value}, expected ${wanted}`);
  }
  if (settings.has('CHAIN_ID')) problems.push("modules/functionapp.bicep: app setting CHAIN_ID is set; the network's preset gives it");

  // The values: main.bicep's defaults, then each parameter file over them.
  const defaults = Object.fromEntries(PAYMENT_SETTINGS.map(({ param }) => [param, defaultOf(main.find((declaration) => declaration.name === param))]));
  const networks = Object.keys(expected.chains);
  const allowed = allowedOf(main.find((declaration) => declaration.name === 'chainNetwork'));
  if (!allowed || [...allowed].sort().join() !== [...networks].sort().join()) {
    problems.push(`main.bicep: param chainNetwork allows ${allowed ? allowed.join(', ') : 'any value'}, not the networks the checks know (${networks.join(', ')})`);
  }
  if (defaults.chainNetwork !== expected.defaultNetwork) problems.push(`main.bicep: the default chainNetwork is ${String(defaults.chainNetwork)}, not ${expected.defaultNetwork}`);
  for (const { param, kind } of PAYMENT_SETTINGS) {
    if (kind === 'override' && defaults[param] !== '' && defaults[param] !== 0) problems.push(`main.bicep: param ${param} defaults to ${String(defaults[param])}; an override defaults to empty (the network's)`);
  }
  for (const [param, value] of Object.entries(expected.appDefaults)) {
    if (defaults[param] !== value) problems.push(`main.bicep: param ${param} defaults to ${String(defaults[param])}; the app's default is ${value}`);
  }

  const same = (a: unknown, b: unknown) => String(a ?? '').toLowerCase() === String(b ?? '').toLowerCase();
  /** What the app would run with from these values, against what belongs to the network. */
  const check = (where: string, values: Record<string, unknown>) => {
    const env = Object.fromEntries(
      PAYMENT_SETTINGS.filter(({ param }) => values[param] !== undefined).map(({ setting, param, kind }) => [setting, kind === 'override' && values[param] === 0 ? '' : String(values[param])]),
    );
    const { config, problems: refused } = expected.load(env);
    for (const problem of refused) problems.push(`${where}: ${problem}`);
    const network = String(values.chainNetwork);
    const chain = expected.chains[network];
    if (!chain) {
      problems.push(`${where}: chainNetwork ${network} is not a network the checks know (${networks.join(', ')}): add its chain id, tokens, feed and explorer to the test's table`);
      return;
    }
    if (!config) return;
    const wanted: Array<[string, unknown]> = [
      ['CHAIN_ID', chain.chainId],
      ['USDC_ADDRESS', chain.usdcAddress],
      ['USDT_ADDRESS', chain.usdtAddress],
      ['ETH_USD_FEED_ADDRESS', chain.ethUsdFeedAddress],
      ['CHAIN_EXPLORER_URL', chain.chainExplorerUrl],
    ];
    for (const [setting, value] of wanted) {
      if (!same(config[setting], value)) problems.push(`${where}: ${setting} would be ${JSON.stringify(config[setting] ?? '')}; on ${chain.name} (${network}) it is ${JSON.stringify(value)}`);
    }
    const heartbeat = config.FEED_HEARTBEAT_SECONDS;
    if (typeof heartbeat !== 'number' || heartbeat <= chain.feedHeartbeat) {
      problems.push(`${where}: FEED_HEARTBEAT_SECONDS ${String(heartbeat)} leaves no margin over the ${chain.name} feed's ${chain.feedHeartbeat}-second heartbeat: a healthy feed would read as stale`);
    }
  };

  check('main.bicep (defaults)', defaults);
  for (const file of paramFiles(files)) {
    const assignments = paramAssignments(files[file]!);
    const values: Record<string, unknown> = { ...defaults };
    for (const { param, kind } of PAYMENT_SETTINGS) {
      const assignment = assignments.find((candidate) => candidate.name === param);
      if (kind === 'network' && !assignment) problems.push(`${file}: sets no ${param}; each parameter file names its network (main.bicep's default is ${expected.defaultNetwork})`);
      if (assignment) values[param] = literalOf(assignment.value);
    }
    check(file, values);
  }
  return problems;
};

/** A route as the gateway checks need it. */
export interface GatewayRoute {
  name: string;
  method: string;
  path: string;
  auth: string;
}

/**
 * Every route reaches the Function App through the gateway on its own path: the API is mounted at the
 * root (pages such as /portal/{id} and /pay/{id}, and /healthz, have no /api prefix), its service URL
 * and the backend are the Function App's root, and the Functions host adds no route prefix (host.json).
 * Key routes are operations of the keyed document (the API policy answers 401 to them without a key);
 * every other route is in the keyless document only, so it is admitted without a key (product
 * "public") and gets the API policy's per-address limit and body size limit, which no
 * operation-level policy may bypass.
 */
export const checkGatewayRouting = (files: InfraFiles, context: { routes: readonly GatewayRoute[]; hostJson: string }): string[] => {
  const problems: string[] = [];
  const resources = statements(files['modules/apim.bicep'] ?? '').filter((statement) => statement.text.startsWith('resource '));
  const api = resources.find((statement) => statement.text.includes("'Microsoft.ApiManagement/service/apis@"));
  const path = api && /\bpath:\s*'([^']*)'/.exec(api.text)?.[1];
  if (path === undefined) problems.push('modules/apim.bicep: the API has no path');
  else if (path.replace(/^\/+|\/+$/g, '') !== '') {
    const outside = context.routes.filter((route) => !route.path.startsWith(`/${path.replace(/^\/+|\/+$/g, '')}/`)).map((route) => `${route.method} ${route.path}`);
    problems.push(`modules/apim.bicep: the API is mounted at /${path}, not the root: ${outside.join(', ') || 'every route'} would not reach the Function App on its own path`);
  }
  if (api && !/\bserviceUrl:\s*'https:\/\/\$\{functionAppHostName\}'/.test(api.text)) problems.push("modules/apim.bicep: the API's serviceUrl is not the Function App's root (https://${functionAppHostName})");
  const backend = resources.find((statement) => statement.text.includes("'Microsoft.ApiManagement/service/backends@"));
  if (!backend || !/\burl:\s*'https:\/\/\$\{functionAppHostName\}'/.test(backend.text)) problems.push("modules/apim.bicep: the backend's url is not the Function App's root (https://${functionAppHostName})");
  let prefix: unknown;
  try {
    prefix = (JSON.parse(context.hostJson) as { extensions?: { http?: { routePrefix?: unknown } } }).extensions?.http?.routePrefix;
  } catch {
    prefix = undefined;
  }
  if (prefix !== '') problems.push(`host.json: extensions.http.routePrefix is ${JSON.stringify(prefix)}, not "": the Functions host would serve every route under a prefix the gateway does not add`);

  const operations = (file: string) => {
    try {
      const document = JSON.parse(files[file] ?? '') as { paths?: Record<string, Record<string, unknown>> };
      return new Set(Object.entries(document.paths ?? {}).flatMap(([route, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`)));
    } catch {
      return new Set<string>();
    }
  };
  const keyed = operations('openapi.keyed.json');
  const keyless = operations('openapi.keyless.json');
  for (const route of context.routes) {
    const id = `${route.method} ${route.path}`;
    if (route.auth === 'key') {
      if (!keyed.has(id)) problems.push(`openapi.keyed.json: ${id} (${route.name}) is missing: the gateway would not ask for its key`);
      if (keyless.has(id)) problems.push(`openapi.keyless.json: ${id} (${route.name}) is a key route`);
    } else {
      if (keyed.has(id)) problems.push(`openapi.keyed.json: ${id} (${route.name}) is a ${route.auth} route: as a key route the gateway answers 401 without a key`);
      if (!keyless.has(id)) problems.push(`openapi.keyless.json: ${id} (${route.name}) is missing: the gateway would answer 404`);
    }
  }
  for (const policy of resources.filter((statement) => statement.text.includes("'Microsoft.ApiManagement/service/apis/operations/policies@"))) {
    if (!/\bparent:\s*unknownRoutes\[/.test(policy.text)) {
      problems.push(`modules/apim.bicep: ${/^resource\s+(\w+)/.exec(policy.text)?.[1]}: a policy on a route's operation; the API policy (key, size and rate checks) is the only one routes get`);
    }
  }
  return problems;
};

/** Statement-level view used by tests that build broken copies. */
export { statements };
