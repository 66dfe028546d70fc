import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MemoryEventQueue } from '../../shared/adapters/memory/deliveries';
import type { AppDeps } from '../../shared/app/deps';
import { updateMerchant } from '../../shared/app/merchants';
import type { WebhookMessage } from '../../shared/app/receipt-status';
import { deliverWebhook } from '../../shared/app/webhooks';
import { memoryDeps, setDeps } from '../../shared/composition';
import { verifyWebhook } from '../../shared/webhook-verify.mjs';
import { invoke } from '../support/http';
import { startReceiver } from '../support/receiver';
import { signInAs, type SignedInBrowser } from '../support/session';
import { testWallets } from '../support/siwe';

/** The merchant console calls developer routes by session: the same answers as by key, its own wallet's only. */
let deps: AppDeps;
let merchant: SignedInBrowser;
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
afterEach(() => receiver?.close());

const wallet = testWallets.merchant.address.toLowerCase();
const newKey = async (browser: SignedInBrowser = merchant) => {
  const answer = await invoke('keys-create', { method: 'POST', path: '/api/keys', headers: browser.headers(), body: { scopes: ['all'] } });
  return { id: (answer.json.key as { id: string }).id, apiKey: answer.json.apiKey as string };
};
const byKey = (id: string) => ({ 'x-subscription-id': id });
const withSplit = () =>
  updateMerchant(deps, wallet, (current, now) => ({
    merchant: { ...current, split: { address: '0x' + '5'.repeat(40), recipients: [], platformFeeBps: 100, partnerFeeBps: 0, txHash: '0x' + '6'.repeat(64), chainId: 31337, deployedAt: now } },
    result: undefined,
  }));

beforeEach(async () => {
  deps = memoryDeps();
  setDeps(deps);
  merchant = await signInAs(testWallets.merchant);
});

describe('the console’s receipts', () => {
  it('lists (with the status filter), shows and logs deliveries like the key routes do', async () => {
    const key = await newKey();
    for (const id of ['R-c1', 'R-c2']) {
      await invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: byKey(key.id), body: { id, lineItems: [{ label: 'Tea', priceUsd: 4 }], totalUsd: 4 } });
    }
    await invoke('receipts-status-post', { method: 'POST', path: '/api/receipts/status', headers: byKey(key.id), body: { id: 'R-c1', status: 'link_opened' } });

    const listed = await invoke('console-receipts-list', { path: '/api/console/receipts?limit=10', headers: merchant.headers() });
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual((await invoke('receipts-list', { path: '/api/receipts?limit=10', headers: byKey(key.id) })).json);
    expect((listed.json.receipts as Array<{ receiptId: string }>).map((receipt) => receipt.receiptId).sort()).toEqual(['R-c1', 'R-c2']);
    const opened = await invoke('console-receipts-list', { path: '/api/console/receipts?status=link_opened', headers: merchant.headers() });
    expect((opened.json.receipts as Array<{ receiptId: string }>).map((receipt) => receipt.receiptId)).toEqual(['R-c1']);
    expect(await invoke('console-receipts-list', { path: '/api/console/receipts?status=lost', headers: merchant.headers() })).toMatchObject({ status: 400, json: { field: 'status' } });

    const one = await invoke('console-receipts-get', { path: '/api/console/receipts/R-c1', headers: merchant.headers() });
    expect(one).toMatchObject({ status: 200, json: { receiptId: 'R-c1', status: 'link_opened' } });
    const log = await invoke('console-receipts-deliveries', { path: '/api/console/receipts/R-c1/deliveries', headers: merchant.headers() });
    expect(log).toMatchObject({ status: 200, json: { deliveries: [], signingKey: { id: key.id, prefix: key.apiKey.slice(0, 8), revoked: false } } });
  });

  it('shows another wallet’s receipt to nobody else (404) and needs a session (401)', async () => {
    const other = await signInAs(testWallets.other);
    const theirs = await newKey(other);
    await invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: byKey(theirs.id), body: { id: 'R-theirs', lineItems: [{ label: 'Tea', priceUsd: 4 }], totalUsd: 4 } });
    expect(await invoke('console-receipts-get', { path: '/api/console/receipts/R-theirs', headers: merchant.headers() })).toMatchObject({ status: 404, json: { error: 'not_found' } });
    expect(await invoke('console-receipts-deliveries', { path: '/api/console/receipts/R-theirs/deliveries', headers: merchant.headers() })).toMatchObject({ status: 404 });
    expect((await invoke('console-receipts-list', { path: '/api/console/receipts', headers: merchant.headers() })).json.receipts).toEqual([]);
    expect((await invoke('console-receipts-list', { path: '/api/console/receipts' })).status).toBe(401);
    expect((await invoke('console-receipts-get', { path: '/api/console/receipts/R-theirs', headers: byKey(theirs.id) })).status).toBe(401);
  });

  it('redelivers a logged event (CSRF needed), signed by the receipt’s key', async () => {
    const key = await newKey();
    receiver = await startReceiver([500], { secret: key.apiKey });
    await invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: byKey(key.id), body: { id: 'R-re', lineItems: [{ label: 'Tea', priceUsd: 4 }], totalUsd: 4, webhook_url: receiver.url } });
    await invoke('receipts-status-post', { method: 'POST', path: '/api/receipts/status', headers: byKey(key.id), body: { id: 'R-re', status: 'link_opened' } });
    const [queued] = (deps.queue as MemoryEventQueue).take('webhooks');
    const message = queued!.message as WebhookMessage;
    await deliverWebhook(deps, message);
    const path = `/api/console/receipts/R-re/deliveries/${message.eventId}/redeliver`;
    const { 'x-csrf-token': _, ...noCsrf } = merchant.headers();
    expect((await invoke('console-receipts-redeliver', { method: 'POST', path, headers: noCsrf })).status).toBe(403);
    const again = await invoke('console-receipts-redeliver', { method: 'POST', path, headers: merchant.headers() });
    expect(again).toMatchObject({ status: 200, json: { ok: true, eventId: message.eventId, attempt: 2, delivered: true, httpStatus: 200 } });
    const [, second] = await receiver.waitFor(2);
    expect(second!.verified).toMatchObject({ ok: true });
    expect(await invoke('console-receipts-redeliver', { method: 'POST', path: '/api/console/receipts/R-re/deliveries/nope/redeliver', headers: merchant.headers() })).toMatchObject({ status: 404 });
    // Another wallet's session cannot send it again.
    const other = await signInAs(testWallets.other);
    expect(await invoke('console-receipts-redeliver', { method: 'POST', path, headers: other.headers() })).toMatchObject({ status: 404, json: { error: 'not_found' } });
    expect(receiver.received).toHaveLength(2);
  });
});

describe('the console’s terminal', () => {
  it('makes a receipt with its payment link and QR code, created by none of the wallet’s keys (its webhook signing secret signs it)', async () => {
    await withSplit();
    await newKey();
    const sold = await invoke('console-receipts-terminal', { method: 'POST', path: '/api/console/receipts/terminal', headers: merchant.headers(), body: { amountUsd: 12.5, label: 'Table 2' } });
    expect(sold).toMatchObject({ status: 201, json: { ok: true, receipt: { status: 'generated', lineItems: [expect.objectContaining({ label: 'Table 2', priceUsd: 12.5 }), { label: 'Tax', priceUsd: 0 }, { label: 'Processing Fee', priceUsd: 0.13 }] } } });
    const id = (sold.json.receipt as { receiptId: string }).receiptId;
    expect(sold.json.qrUrl).toBe(`http://localhost:7071/api/portal/${id}/qr.svg`);
    expect((await deps.receipts.get(wallet, id))!.value.createdBy).toBeNull();
  });

  it('answers 403 split_required without a split, 400 for a bad amount and 403 without the CSRF header', async () => {
    const sell = (body: unknown, headers = merchant.headers()) => invoke('console-receipts-terminal', { method: 'POST', path: '/api/console/receipts/terminal', headers, body });
    expect(await sell({ amountUsd: 5 })).toMatchObject({ status: 403, json: { error: 'split_required' } });
    await withSplit();
    expect(await sell({ amountUsd: 0 })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'amountUsd' } });
    const { 'x-csrf-token': _, ...noCsrf } = merchant.headers();
    expect((await sell({ amountUsd: 5 }, noCsrf)).status).toBe(403);
  });
});

describe('the console’s test webhook', () => {
  const send = (body: unknown) => invoke('console-webhooks-test', { method: 'POST', path: '/api/console/webhooks/test', headers: merchant.headers(), body });

  it('is signed by the key named, else by the shop’s webhook signing secret (never its newest key)', async () => {
    const first = await newKey();
    const second = await newKey();
    const { webhookSecret } = (await invoke('console-webhook-secret-rotate', { method: 'POST', path: '/api/console/webhooks/secret/rotate', headers: merchant.headers() })).json as { webhookSecret: string };
    receiver = await startReceiver([200, 503]);
    expect(await send({ url: receiver.url, keyId: first.id })).toMatchObject({ status: 200, json: { ok: true, delivered: true, httpStatus: 200 } });
    expect(await send({ url: receiver.url })).toMatchObject({ status: 200, json: { ok: true, delivered: false, httpStatus: 503 } });
    const [named, unnamed] = await receiver.waitFor(2);
    expect(verifyWebhook({ body: named!.body, headers: named!.headers, secret: first.apiKey }).ok).toBe(true);
    expect(verifyWebhook({ body: unnamed!.body, headers: unnamed!.headers, secret: webhookSecret }).ok).toBe(true);
    expect(verifyWebhook({ body: unnamed!.body, headers: unnamed!.headers, secret: second.apiKey }).ok).toBe(false);
  });

  it('refuses a revoked or another wallet’s key, neither a key nor a signing secret, and a refused URL (400)', async () => {
    receiver = await startReceiver();
    expect(await send({ url: receiver.url })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'keyId' } });
    const mine = await newKey();
    const theirs = await newKey(await signInAs(testWallets.other));
    expect(await send({ url: receiver.url, keyId: theirs.id })).toMatchObject({ status: 400, json: { field: 'keyId' } });
    await invoke('keys-revoke', { method: 'DELETE', path: `/api/keys/${mine.id}`, headers: merchant.headers() });
    expect(await send({ url: receiver.url, keyId: mine.id })).toMatchObject({ status: 400, json: { field: 'keyId' } });
    await newKey();
    setDeps({ ...deps, settings: { ...deps.settings, development: false } });
    expect(await send({ url: receiver.url })).toMatchObject({ status: 400, json: { field: 'url' } });
    expect(receiver.received).toEqual([]);
  });
});
