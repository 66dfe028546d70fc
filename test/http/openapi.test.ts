import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import packageJson from '../../package.json';
import { memoryDeps, setDeps } from '../../shared/composition';
import { loadConfig } from '../../shared/config';
import { openApiDocument, signInWithXRoutes } from '../../shared/http/openapi';
import { allRoutes } from '../../shared/http/routes';
import { PaymentRequiredV1Body } from '../../shared/http/x402-challenge';
import { generatedDocuments } from '../../scripts/openapi';
import { invoke } from '../support/http';

const operations = (document: { paths: Record<string, Record<string, { operationId: string }>> }) =>
  Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`));

describe('the OpenAPI document', () => {
  it('is served publicly at /api/openapi.json, valid for an independent validator', async () => {
    setDeps(memoryDeps());
    const answer = await invoke('openapi', { path: '/api/openapi.json' });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ openapi: '3.1.0', info: { version: packageJson.version } });
    await expect(SwaggerParser.validate(structuredClone(answer.json) as never)).resolves.toBeTruthy();
    const { info: _, ...broken } = structuredClone(answer.json);
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
  });

  it('has exactly the routes of the route table, with their auth, and the webhook', async () => {
    setDeps(memoryDeps());
    const document = (await invoke('openapi', { path: '/api/openapi.json' })).json as never as Parameters<typeof operations>[0] & { webhooks: object; components: { securitySchemes: object } };
    expect(operations(document).sort()).toEqual(allRoutes.map((route) => `${route.method} ${route.path} ${route.name}`).sort());
    expect(Object.keys(document.webhooks)).toEqual(['receipt.status_updated']);
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['sessionCookie', 'siwx', 'subscriptionKey', 'x402']);
    const inventory = (document.paths['/api/inventory'] as unknown as Record<string, { security: unknown; parameters: Array<{ name: string }>; responses: Record<string, unknown> }>).get!;
    expect(inventory.security).toEqual([{ subscriptionKey: [] }]);
    expect(inventory.parameters.map((p) => p.name)).toEqual(['q', 'category', 'taxable', 'stock', 'priceMin', 'priceMax', 'tags', 'tagsMode', 'pack', 'sort', 'order', 'limit', 'page']);
    expect(Object.keys(inventory.responses).sort()).toEqual(['200', '400', '401', '403', '429', '500']);
  });

  it('splits into the two documents API Management imports, committed up to date (npm run build)', async () => {
    const generated = generatedDocuments();
    for (const file of ['infra/openapi.keyed.json', 'infra/openapi.keyless.json']) {
      expect(readFileSync(join(__dirname, '../..', file), 'utf8'), `${file}: run npm run build`).toBe(generated[file]);
      await expect(SwaggerParser.validate(JSON.parse(generated[file]!))).resolves.toBeTruthy();
    }
    const keyed = operations(JSON.parse(generated['infra/openapi.keyed.json']!));
    const keyless = operations(JSON.parse(generated['infra/openapi.keyless.json']!));
    expect([...keyed, ...keyless].sort()).toEqual(allRoutes.map((route) => `${route.method} ${route.path} ${route.name}`).sort());
  });
});

type Schema = Record<string, unknown>;

/** Keywords that describe a schema without constraining it: a schema of only these accepts anything. */
const annotations = new Set(['description', 'title', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$comment']);

const isOpen = (schema: unknown): boolean => {
  if (schema === true) return true;
  if (!schema || typeof schema !== 'object') return false;
  const node = schema as Schema;
  if (Object.keys(node).every((key) => annotations.has(key))) return true;
  // An object that names no property and lets any value in under any name.
  return (
    node.type === 'object' &&
    Object.keys((node.properties as Schema | undefined) ?? {}).length === 0 &&
    node.patternProperties === undefined &&
    (node.additionalProperties === undefined || isOpen(node.additionalProperties))
  );
};

/** Every sub-schema (by keyword, not every nested object: a `default` value is not a schema), with its pointer. */
const subSchemas = function* (schema: unknown, at: string): Generator<[string, unknown]> {
  yield [at, schema];
  if (!schema || typeof schema !== 'object') return;
  const node = schema as Schema;
  for (const key of ['properties', 'patternProperties', '$defs']) {
    for (const [name, child] of Object.entries((node[key] as Schema | undefined) ?? {})) yield* subSchemas(child, `${at}/${key}/${name}`);
  }
  for (const key of ['additionalProperties', 'items', 'contains', 'not', 'if', 'then', 'else', 'propertyNames', 'unevaluatedProperties']) {
    if (node[key] !== undefined && typeof node[key] !== 'boolean') yield* subSchemas(node[key], `${at}/${key}`);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
    for (const [index, child] of ((node[key] as unknown[] | undefined) ?? []).entries()) yield* subSchemas(child, `${at}/${key}/${index}`);
  }
};

type Operation = {
  operationId: string;
  parameters?: Array<{ name: string; schema: unknown }>;
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
};

/** Each request, parameter and response schema of the document, named `<operation> <part>`. */
const schemasOf = (document: { paths: Record<string, Record<string, Operation>>; webhooks: Record<string, Record<string, Operation>>; components: { schemas: Schema } }) => {
  const parts: Array<[string, unknown]> = [];
  const operations = [...Object.values(document.paths), ...Object.values(document.webhooks)].flatMap((methods) => Object.values(methods));
  for (const operation of operations) {
    const name = operation.operationId ?? 'webhook';
    for (const parameter of operation.parameters ?? []) parts.push([`${name} parameter ${parameter.name}`, parameter.schema]);
    for (const content of Object.values(operation.requestBody?.content ?? {})) parts.push([`${name} request`, content.schema]);
    for (const [status, response] of Object.entries(operation.responses)) {
      for (const content of Object.values(response.content ?? {})) parts.push([`${name} response ${status}`, content.schema]);
    }
  }
  for (const [name, schema] of Object.entries(document.components.schemas)) parts.push([`components ${name}`, schema]);
  return parts;
};

/**
 * The only schemas that may stay open, and why. Each entry must still match something, so a
 * stale one is noticed.
 */
const mayBeOpen: Array<{ where: RegExp; why: string }> = [
  { where: /^openapi response 200 #(\/additionalProperties)?$/, why: 'the answer is this OpenAPI document itself, described by the OpenAPI specification' },
  {
    where: /^[\w.-]+ (request|response 20\d) #(\/properties\/\w+(\/items)?)*\/properties\/metadata(\/anyOf\/0)?(\/additionalProperties)?$/,
    why: "`metadata` is the merchant's own JSON object (at most 4 KiB), kept and echoed as given: any JSON value is valid in it",
  },
  {
    where: /^onramp-webhook request #(\/additionalProperties)?$/,
    why: "a card on-ramp provider's own event (Stripe's, or the sandbox's), checked against the provider's signature and read by its adapter",
  },
];

describe('the OpenAPI document describes every request and response completely', () => {
  const document = openApiDocument(allRoutes, { title: 'test', serverUrl: 'https://api.example.com' }) as unknown as Parameters<typeof schemasOf>[0];
  const open = schemasOf(document).flatMap(([part, schema]) => [...subSchemas(schema, '#')].filter(([, node]) => isOpen(node)).map(([at]) => `${part} ${at}`));

  it('has no empty or open schema outside the allow-list', () => {
    expect(open.filter((location) => !mayBeOpen.some((entry) => entry.where.test(location)))).toEqual([]);
  });

  it('uses every allow-list entry (none is stale)', () => {
    for (const entry of mayBeOpen) expect(open.some((location) => entry.where.test(location)), `${entry.where}: ${entry.why}`).toBe(true);
  });

  it('finds open schemas where there are some (the check itself works)', () => {
    const loose = openApiDocument([{ ...allRoutes.find((route) => route.name === 'orders-create')!, documentedBody: undefined }], { title: 'test', serverUrl: 'https://api.example.com' });
    const found = schemasOf(loose as unknown as Parameters<typeof schemasOf>[0]).flatMap(([part, schema]) => [...subSchemas(schema, '#')].filter(([, node]) => isOpen(node)).map(([at]) => `${part} ${at}`));
    expect(found).toContain('orders-create request #');
  });

  it('describes pages as text/html (errors as pages, or the error shape from the gateway) and files by their media types', () => {
    const get = (path: string) => (document.paths[path] as Record<string, Operation>).get!;
    const types = (operation: Operation, status: string) => Object.keys(operation.responses[status]!.content ?? {});
    for (const path of ['/portal/{id}', '/pay/{id}']) {
      expect(types(get(path), '200')).toEqual(['text/html']);
      expect(types(get(path), '404')).toEqual(['text/html', 'application/json']);
    }
    expect(types(get('/portal/assets/{file}'), '200')).toEqual(['text/javascript', 'text/css']);
    expect(types(get('/api/portal/{id}/qr.svg'), '200')).toEqual(['image/svg+xml']);
    expect(types(get('/api/portal/{id}/qr.svg'), '404')).toEqual(['application/json']);
    expect(types(get('/api/portal/{id}'), '200')).toEqual(['application/json']);
    // Every route that answers something other than JSON says what.
    for (const route of allRoutes.filter((candidate) => candidate.responseKind === 'asset')) expect(route.assetTypes?.length, route.name).toBeGreaterThan(0);
  });

  it('documents the order request the use case validates: items by sku or id with qty, jurisdiction and the receipt fields', () => {
    const operation = (document.paths['/api/orders'] as Record<string, Operation>).post!;
    const schema = operation.requestBody!.content['application/json']!.schema as { properties: Record<string, Schema>; required: string[] };
    expect(Object.keys(schema.properties)).toEqual(['items', 'jurisdictionCode', 'webhook_url', 'redirect_url', 'transactionId', 'metadata']);
    expect(schema.required).toEqual(['items']);
    expect(schema.properties.items).toMatchObject({
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: { type: 'object', properties: { sku: { type: 'string' }, id: { type: 'string' }, qty: { type: 'integer', minimum: 1 } }, required: ['qty'], oneOf: [{ required: ['sku'] }, { required: ['id'] }] },
    });
    // The same rules as the receipt creation request's fields.
    const receipts = (document.paths['/api/receipts'] as Record<string, Operation>).post!.requestBody!.content['application/json']!.schema as { properties: Record<string, Schema> };
    for (const field of ['webhook_url', 'redirect_url', 'transactionId', 'metadata']) expect(schema.properties[field]).toEqual(receipts.properties[field]);
  });
});

type Described = {
  operationId: string;
  security?: Array<Record<string, unknown>>;
  'x-auth': { kind: string };
  parameters?: Array<{ name: string; in: string; required?: boolean }>;
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>;
};
type DescribedDocument = { paths: Record<string, Record<string, Described>>; components: { schemas: Record<string, unknown> } };

const headerParameter = (operation: Described, name: string) => operation.parameters?.find((parameter) => parameter.in === 'header' && parameter.name === name);

/**
 * What an x402 route owes its callers in the document: the x402 security, the optional proof headers,
 * a 402 whose body is the v1 challenge with the v2 challenge in PAYMENT-REQUIRED, and the settlement
 * headers of the 200. Only x402 routes answer 402.
 */
const x402Problems = (document: DescribedDocument): string[] => {
  const problems: string[] = [];
  const challenge = (document.components.schemas as Record<string, unknown>).PaymentRequired;
  const expected = (() => {
    const { $schema: _, ...json } = z.toJSONSchema(PaymentRequiredV1Body, { io: 'output', target: 'draft-2020-12' }) as Record<string, unknown>;
    return json;
  })();
  const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
  if (operations.some((operation) => operation['x-auth'].kind === 'x402') && JSON.stringify(challenge) !== JSON.stringify(expected)) {
    problems.push('components.schemas.PaymentRequired is not the v1 challenge (PaymentRequiredV1Body)');
  }
  for (const operation of operations) {
    const name = operation.operationId;
    const payment = operation.responses['402'];
    if (operation['x-auth'].kind !== 'x402') {
      if (payment) problems.push(`${name}: answers 402 but is not an x402 route`);
      continue;
    }
    if (!operation.security?.some((requirement) => 'x402' in requirement)) problems.push(`${name}: security does not name x402`);
    for (const header of ['X-PAYMENT', 'PAYMENT-SIGNATURE']) {
      const parameter = headerParameter(operation, header);
      if (!parameter) problems.push(`${name}: no ${header} request header`);
      else if (parameter.required) problems.push(`${name}: ${header} is required; without a proof the route answers 402`);
    }
    if (!payment) {
      problems.push(`${name}: no 402 response`);
      continue;
    }
    const schema = payment.content?.['application/json']?.schema as { $ref?: string } | undefined;
    if (schema?.$ref !== '#/components/schemas/PaymentRequired') problems.push(`${name}: the 402 body is not the PaymentRequired challenge`);
    if (!payment.headers?.['PAYMENT-REQUIRED']) problems.push(`${name}: the 402 has no PAYMENT-REQUIRED header`);
    for (const header of ['X-PAYMENT-RESPONSE', 'PAYMENT-RESPONSE']) if (!operation.responses['200']?.headers?.[header]) problems.push(`${name}: the 200 has no ${header} header`);
  }
  return problems;
};

describe('the OpenAPI document describes x402 payment and sign-in-with-x', () => {
  const document = openApiDocument(allRoutes, { title: 'test', serverUrl: 'https://api.example.com' }) as unknown as DescribedDocument;
  const operation = (path: string, method: string) => document.paths[path]![method]!;

  it('gives every x402 route its 402 challenge, the proof headers and the settlement headers', () => {
    expect(allRoutes.filter((route) => route.auth.kind === 'x402').map((route) => route.path).sort()).toEqual(['/api/x402/orders', '/api/x402/subscribe']);
    expect(x402Problems(document)).toEqual([]);
    const keyless = JSON.parse(generatedDocuments()['infra/openapi.keyless.json']!) as DescribedDocument;
    expect(x402Problems(keyless)).toEqual([]);
    expect(operation('/api/x402/orders', 'post').security).toEqual([{ x402: [] }]);
  });

  it('fails an x402 route without its 402, with the error shape as its 402, or without its headers', () => {
    const broken = structuredClone(document);
    delete broken.paths['/api/x402/orders']!.post!.responses['402'];
    expect(x402Problems(broken)).toEqual(['x402-orders: no 402 response']);
    const errorShape = structuredClone(document);
    errorShape.paths['/api/x402/subscribe']!.post!.responses['402']!.content = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
    delete errorShape.paths['/api/x402/subscribe']!.post!.responses['402']!.headers;
    expect(x402Problems(errorShape)).toEqual(['x402-subscribe: the 402 body is not the PaymentRequired challenge', 'x402-subscribe: the 402 has no PAYMENT-REQUIRED header']);
    const headers = structuredClone(document);
    const orders = headers.paths['/api/x402/orders']!.post!;
    orders.parameters = orders.parameters!.filter((parameter) => parameter.name !== 'PAYMENT-SIGNATURE');
    delete orders.responses['200']!.headers!['PAYMENT-RESPONSE'];
    expect(x402Problems(headers)).toEqual(['x402-orders: no PAYMENT-SIGNATURE request header', 'x402-orders: the 200 has no PAYMENT-RESPONSE header']);
    const elsewhere = structuredClone(document);
    elsewhere.paths['/api/orders']!.post!.responses['402'] = orders.responses['402']!;
    expect(x402Problems(elsewhere)).toEqual(['orders-create: answers 402 but is not an x402 route']);
  });

  it('describes the challenge body as the protocol’s v1 PaymentRequired', () => {
    const challenge = {
      x402Version: 1,
      error: 'payment_required',
      accepts: [
        {
          scheme: 'exact',
          network: 'base-sepolia',
          maxAmountRequired: '10770000',
          resource: 'https://pay.example.com/api/x402/orders',
          description: 'Order from Coffee Corner',
          mimeType: 'application/json',
          payTo: `0x${'ab'.repeat(20)}`,
          maxTimeoutSeconds: 300,
          asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
          extra: { name: 'USDC', version: '2' },
        },
      ],
    };
    expect(PaymentRequiredV1Body.safeParse(challenge).success).toBe(true);
    expect(PaymentRequiredV1Body.safeParse({ error: 'payment_required', message: 'pay first' }).success).toBe(false);
    expect(PaymentRequiredV1Body.safeParse({ ...challenge, accepts: [] }).success).toBe(false);
  });

  it('lists sign-in-with-x where a route reads it: optional on the directory, the starter plan’s credential on subscribe, beside the key on the shop configuration', () => {
    for (const name of signInWithXRoutes) expect(allRoutes.some((route) => route.name === name), name).toBe(true);
    expect(operation('/api/directory/shops', 'get').security).toEqual([{}, { siwx: [] }]);
    expect(operation('/api/x402/subscribe', 'post').security).toEqual([{ x402: [] }, { siwx: [] }]);
    // The gateway lets a call without a key through to this one route (x-auth signInWithX); the backend reads the proof.
    expect(operation('/api/shop/config', 'get').security).toEqual([{ subscriptionKey: [] }, { siwx: [] }]);
    for (const [path, method] of [['/api/directory/shops', 'get'], ['/api/x402/subscribe', 'post'], ['/api/shop/config', 'get']] as const) {
      expect(headerParameter(operation(path, method), 'SIGN-IN-WITH-X')).toMatchObject({ required: false });
    }
    expect(headerParameter(operation('/api/x402/orders', 'post'), 'SIGN-IN-WITH-X')).toBeUndefined();
  });
});

describe('the version', () => {
  it('is package.json’s in /healthz, the served document and the documents API Management imports', async () => {
    setDeps(memoryDeps());
    const health = await invoke('healthz', { path: '/healthz' });
    const served = await invoke('openapi', { path: '/api/openapi.json' });
    expect(health.json.version).toBe(packageJson.version);
    expect((served.json.info as { version: string }).version).toBe(health.json.version);
    for (const text of Object.values(generatedDocuments())) expect((JSON.parse(text) as { info: { version: string } }).info.version).toBe(packageJson.version);
  });

  it('cannot be set apart from package.json’s by the environment', () => {
    expect(loadConfig({ STORE: 'memory', APP_ENV: 'development', APP_VERSION: '9.9.9' }).APP_VERSION).toBe(packageJson.version);
  });
});
