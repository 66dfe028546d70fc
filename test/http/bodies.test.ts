import { InvocationContext, type HttpRequest, type HttpResponseInit } from '@azure/functions';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps, setDeps } from '../../shared/composition';
import { httpFunctions } from '../../shared/http/function';
import { MAX_BODY_BYTES } from '../../shared/http/headers';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from '../../shared/http/json';
import { addMerchant, invoke, type Merchant } from '../support/http';
import { wallets } from '../support/stores';

let deps: AppDeps;
let merchant: Merchant;

beforeEach(async () => {
  deps = memoryDeps();
  setDeps(deps);
  merchant = await addMerchant(deps, wallets.alice);
});

const nested = (depth: number, leaf = '1') => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;

describe('JSON depth', () => {
  it('counts nesting outside strings only, and stops at the limit', () => {
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify({ text: '[[[[{{{{'.repeat(100), quote: 'a \\" [[[ "' }))).toBe(false);
    expect(jsonDepthExceeds(`{"a":${nested(MAX_JSON_DEPTH - 1)}}`)).toBe(false);
    expect(jsonDepthExceeds(`{"a":${nested(MAX_JSON_DEPTH)}}`)).toBe(true);
  });

  it('answers 400 invalid_input, not 500, for receipt metadata nested thousands deep', async () => {
    const metadata = `{"a":${nested(5_000)}}`;
    const body = `{"id":"deep-1","lineItems":[{"label":"A","priceUsd":1}],"totalUsd":1,"metadata":${metadata}}`;
    const answer = await invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: { 'x-subscription-id': merchant.subscriptionId }, body });
    expect(answer).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'body' } });
    expect(await deps.receipts.get(wallets.alice, 'deep-1')).toBeUndefined();
  });

  it('accepts metadata nested within the limit', async () => {
    const metadata = { a: JSON.parse(nested(20)) };
    const answer = await invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: { 'x-subscription-id': merchant.subscriptionId }, body: { id: 'ok-1', lineItems: [{ label: 'A', priceUsd: 1 }], totalUsd: 1, metadata } });
    expect(answer.status).toBe(201);
  });
});

describe('request bodies on the Functions path', () => {
  /** A body the client streams without Content-Length, counting what the handler pulled. */
  const endless = () => {
    let pulled = 0;
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += chunk.byteLength;
        if (pulled > 100 * 1024 * 1024) controller.close();
        else controller.enqueue(chunk);
      },
    });
    return { stream, pulled: () => pulled };
  };

  const call = async (name: string, path: string, body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) => {
    const request = { method: 'POST', url: `http://localhost${path}`, headers: new Headers(headers), query: new URLSearchParams(), params: {}, body } as unknown as HttpRequest;
    const response = (await httpFunctions.get(name)!.options.handler(request, new InvocationContext({ functionName: name, logHandler: () => {} }))) as HttpResponseInit;
    return { status: response.status, json: JSON.parse(String(response.body)) as { error: string } };
  };

  it('reads a streamed body only up to the limit and answers 413 before checking the key', async () => {
    const body = endless();
    expect(await call('receipts-create', '/api/receipts', body.stream)).toMatchObject({ status: 413, json: { error: 'payload_too_large' } });
    expect(body.pulled()).toBeLessThanOrEqual(MAX_BODY_BYTES + 2 * 64 * 1024);
  });

  it('reads a streamed body only up to the limit on a public route too', async () => {
    const body = endless();
    expect(await call('auth-login', '/api/auth/login', body.stream)).toMatchObject({ status: 413, json: { error: 'payload_too_large' } });
    expect(body.pulled()).toBeLessThanOrEqual(MAX_BODY_BYTES + 2 * 64 * 1024);
  });
});

describe('keys that cannot be kept', () => {
  it.each([
    ['plainly', '{"__proto__":{"x":1},"a":1}'],
    ['escaped', '{"\\u005f_proto__":{"x":1},"a":1}'],
    ['nested in an array', '{"list":[{"__proto__":{}}]}'],
  ])('refuses a __proto__ key (%s) with 400 instead of dropping it', async (_, metadata) => {
    const body = `{"id":"proto-1","lineItems":[{"label":"A","priceUsd":1}],"totalUsd":1,"metadata":${metadata}}`;
    const answer = await invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: { 'x-subscription-id': merchant.subscriptionId }, body });
    expect(answer).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'body' } });
    expect(await deps.receipts.get(wallets.alice, 'proto-1')).toBeUndefined();
  });

  it('keeps other keys, constructor and prototype included', async () => {
    const metadata = { constructor: 'c', prototype: 'p', note: '__proto__ in a value is fine' };
    const answer = await invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: { 'x-subscription-id': merchant.subscriptionId }, body: { id: 'proto-2', lineItems: [{ label: 'A', priceUsd: 1 }], totalUsd: 1, metadata } });
    expect(answer.status).toBe(201);
    expect((await deps.receipts.get(wallets.alice, 'proto-2'))?.value.metadata).toEqual(metadata);
  });
});
