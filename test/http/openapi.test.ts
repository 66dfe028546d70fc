import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { memoryDeps, setDeps } from '../../shared/composition';
import { allRoutes } from '../../shared/http/routes';
import { generatedDocuments } from '../../scripts/openapi';
import { invoke } from '../support/http';

const operations = (document: { paths: Record<string, Record<string, { operationId: string }>> }) =>
  Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`));

describe('the OpenAPI document', () => {
  it('is served publicly at /api/openapi.json, version 1.0.0, valid for an independent validator', async () => {
    setDeps(memoryDeps());
    const answer = await invoke('openapi', { path: '/api/openapi.json' });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ openapi: '3.1.0', info: { version: '1.0.0' } });
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
