import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxSignature } from '../../shared/adapters/onramp/sandbox';
import { SANDBOX_SUCCESS, sandboxOutcomes } from '../../shared/app/onramp-sandbox';
import { failureInfo, type FailureCode } from '../../shared/domain/failures';
import { startReceiver } from '../support/receiver';
import { call, stackEnv, startStack, stopStack, waitFor, type StartedStack } from '../support/stack';

/**
 * Card payments on `npm start`, over HTTP, as a buyer and a merchant see them: the portal opens a
 * sandbox on-ramp session, the sandbox's checkout page takes an outcome (a plain form post), and the
 * merchant's receiver gets the signed webhooks; forged and replayed provider webhooks change nothing.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'card-e2e-'));
const SANDBOX_SECRET = 'e2e-sandbox-secret-0123456789';
let stack: StartedStack;

beforeAll(async () => {
  // Many keyless calls from one address (every outcome's page and form): the per-address limit is raised.
  stack = await startStack(stackEnv(dataDir, { ONRAMP_SANDBOX_SECRET: SANDBOX_SECRET, KEYLESS_RATE_LIMIT_PER_MINUTE: '100000', PORTAL_RATE_LIMIT_PER_MINUTE: '100000' }));
}, 120_000);
afterAll(async () => {
  if (process.env.SHOW_STACK_OUTPUT) console.log(stack.output());
  await stopStack(stack);
  rmSync(dataDir, { recursive: true, force: true });
});

const api = (path: string, init: { method?: string; body?: unknown } = {}) => call(stack.baseUrl, path, { ...init, key: stack.apiKey });

let serial = 0;
const newReceipt = async (extra: Record<string, unknown> = {}) => {
  const id = `e2e-card-${++serial}-${Date.now()}`;
  const created = await api('/api/receipts', { method: 'POST', body: { id, lineItems: [{ label: 'Beans', priceUsd: 21.4 }], totalUsd: 21.4, ...extra } });
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  return id;
};

const openSession = async (id: string) => {
  const answer = await call(stack.baseUrl, `/api/portal/${id}/onramp`, { method: 'POST', body: {} });
  expect(answer.status, JSON.stringify(answer.json)).toBe(200);
  return answer.json as { sessionId: string; url: string; provider: string; quote: { amount: string; token: string; payTo: string } };
};

/** The checkout page as a browser loads it, then its form sent with the outcome picked. */
const checkout = async (url: string, outcome: string) => {
  const page = await fetch(url);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
  const html = await page.text();
  expect(html).toContain(`value="${outcome}"`);
  const action = /<form[^>]+action="([^"]+)"/.exec(html)![1]!;
  const sent = await fetch(new URL(action, url), { method: 'POST', body: new URLSearchParams({ outcome }), redirect: 'manual' });
  return { status: sent.status, location: sent.headers.get('location') };
};

const statusOf = async (id: string) => (await api(`/api/receipts/status?id=${encodeURIComponent(id)}`)).json;

describe('paying by card through the sandbox on-ramp on the local stack', () => {
  it('success: checkout_initialized → checkout_success → paid, each webhook signed and carrying the on-ramp fields; redirect_url after', async () => {
    const receiver = await startReceiver([], { secret: stack.apiKey });
    try {
      const id = await newReceipt({ webhook_url: receiver.url, redirect_url: 'https://shop.example/thanks?order=7' });
      const session = await openSession(id);
      expect(session).toMatchObject({ provider: 'sandbox', url: `${stack.baseUrl}/onramp/sandbox/${session.sessionId}` });
      expect(session.quote.token).toBe('USDC');
      const finished = await checkout(session.url, SANDBOX_SUCCESS);
      expect(finished).toEqual({ status: 303, location: 'https://shop.example/thanks?order=7' });

      const deliveries = await receiver.waitFor(3);
      // Webhooks queued moments apart may arrive in any order (a poll delivers its batch at once): each
      // names its previous status, which is what chains them.
      const sequence = ['checkout_initialized', 'checkout_success', 'paid'];
      const bodies = deliveries.map((delivery) => JSON.parse(delivery.body) as Record<string, unknown>).sort((a, b) => sequence.indexOf(a.status as string) - sequence.indexOf(b.status as string));
      expect(deliveries.every((delivery) => delivery.verified?.ok)).toBe(true);
      expect(bodies.map((body) => [body.previousStatus, body.status])).toEqual([
        ['pending', 'checkout_initialized'],
        ['checkout_initialized', 'checkout_success'],
        ['checkout_success', 'paid'],
      ]);
      const paid = bodies[2]!;
      expect(paid).toMatchObject({ onrampSessionId: session.sessionId, isOnrampSessionUnique: true, token: 'USDC', failureCode: null, previousStatus: 'checkout_success' });
      expect(paid.onrampSourceAmountUsd).toBeGreaterThan(paid.customerTotalUsd as number);
      expect(paid.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(bodies[1]).toMatchObject({ onrampSessionId: session.sessionId, onrampSourceAmountUsd: paid.onrampSourceAmountUsd });
      expect(await statusOf(id)).toMatchObject({ status: 'paid', transactionHash: paid.transactionHash, failureCode: null });
      expect((await api(`/api/receipts/${id}`)).json).toMatchObject({ status: 'paid', onrampSessionId: session.sessionId, isOnrampSessionUnique: true, onrampSourceAmountUsd: paid.onrampSourceAmountUsd });
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it('every sandbox failure outcome → failed with the exact PORTAL_* code, category, reason and action, in the status answer and the webhook', async () => {
    const receiver = await startReceiver([], { secret: stack.apiKey });
    try {
      const outcomes = sandboxOutcomes.filter((outcome) => outcome.value !== SANDBOX_SUCCESS);
      for (const outcome of outcomes) {
        const id = await newReceipt({ webhook_url: receiver.url });
        const session = await openSession(id);
        const finished = await checkout(session.url, outcome.value);
        expect(finished).toEqual({ status: 303, location: `${stack.baseUrl}/pay/${id}` });
        const info = failureInfo(outcome.portalCode as FailureCode);
        const expected = { status: 'failed', failureCode: outcome.portalCode, failureCategory: info.category, failureReason: info.reason, failureAction: info.action, providerErrorCode: outcome.value };
        expect(await statusOf(id), outcome.value).toMatchObject(expected);
        const failed = await waitFor(`the failed webhook of ${id}`, () =>
          receiver.received.map((delivery) => JSON.parse(delivery.body) as Record<string, unknown>).find((body) => body.receiptId === id && body.status === 'failed'),
        );
        expect(failed, outcome.value).toMatchObject({ ...expected, previousStatus: 'checkout_initialized', onrampSessionId: session.sessionId });
        expect(failed.providerRequestId).toMatch(/^req_sbx_/);
      }
    } finally {
      await receiver.close();
    }
  }, 180_000);

  it('a forged or altered provider webhook is refused (400 invalid_signature) and a replayed one applied once', async () => {
    const id = await newReceipt();
    const session = await openSession(id);
    const created = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({
      id: `evt_e2e_${Date.now()}`,
      type: 'sandbox.session_updated',
      created,
      data: { session: session.sessionId, kind: 'rejected', source_amount_usd: null, transaction_hash: null, code: 'card_declined', request_id: 'req_e2e' },
    });
    const post = (text: string, signature: string) =>
      fetch(`${stack.baseUrl}/api/onramp/sandbox/webhook`, { method: 'POST', body: text, headers: { 'content-type': 'application/json', 'sandbox-signature': signature } }).then(async (response) => ({
        status: response.status,
        json: (await response.json()) as Record<string, unknown>,
      }));
    const forged = await post(body, sandboxSignature('not-the-sandbox-secret-at-all', created, body));
    expect(forged).toMatchObject({ status: 400, json: { error: 'invalid_signature' } });
    const altered = await post(body.replace('card_declined', 'fraud_blocked'), sandboxSignature(SANDBOX_SECRET, created, body));
    expect(altered).toMatchObject({ status: 400, json: { error: 'invalid_signature' } });
    const stale = await post(body, sandboxSignature(SANDBOX_SECRET, created - 3_600, body));
    expect(stale).toMatchObject({ status: 400, json: { error: 'invalid_signature' } });
    expect((await statusOf(id)).status).toBe('pending');

    const genuine = sandboxSignature(SANDBOX_SECRET, created, body);
    expect(await post(body, genuine)).toMatchObject({ status: 200, json: { applied: true, status: 'failed' } });
    const before = await statusOf(id);
    expect(await post(body, genuine)).toMatchObject({ status: 200, json: { applied: false } });
    expect(await statusOf(id)).toEqual(before);
    // An unknown provider is not found.
    expect((await fetch(`${stack.baseUrl}/api/onramp/nobody/webhook`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })).status).toBe(404);
  }, 60_000);

  it('the sandbox page of an unknown session is a 404 page; a bad outcome is 400', async () => {
    const missing = await fetch(`${stack.baseUrl}/onramp/sandbox/sbx_nope`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('text/html');
    const id = await newReceipt();
    const session = await openSession(id);
    const bad = await fetch(session.url, { method: 'POST', body: new URLSearchParams({ outcome: '<script>' }), redirect: 'manual' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).not.toContain('<script>');
  }, 60_000);
});
