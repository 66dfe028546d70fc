/**
 * Who signs a receipt's webhooks when no API key created it (the console's terminal, an agent's
 * order): the shop's own webhook signing secret, made when the shop's webhook URL is first set,
 * shown once, kept sealed, rotated with an overlap in which the old and the new secret both sign.
 */
import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MemoryEventQueue } from '../../shared/adapters/memory/deliveries';
import type { AppDeps } from '../../shared/app/deps';
import { updateMerchant } from '../../shared/app/merchants';
import { changeStatus } from '../../shared/app/receipt-status';
import type { WebhookMessage } from '../../shared/app/receipt-status';
import { deliverWebhook } from '../../shared/app/webhooks';
import { memoryDeps, setDeps } from '../../shared/composition';
import { WEBHOOK_SECRET_OVERLAP_MS } from '../../shared/domain/webhook-secret';
import { adminPage } from '../../web/admin/page';
import { verifyWebhook } from '../../shared/webhook-verify.mjs';
import { invoke } from '../support/http';
import { startReceiver, type Received } from '../support/receiver';
import { signInAs, type SignedInBrowser } from '../support/session';
import { testWallets } from '../support/siwe';

let deps: AppDeps;
let merchant: SignedInBrowser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
/** The service's clock: real time plus `offset`, so a test can let a day pass. */
let offset = 0;
const clock = { now: () => Date.now() + offset };
const wallet = testWallets.merchant.address.toLowerCase();

const queued = () => (deps.queue as MemoryEventQueue).take('webhooks').map((entry) => entry.message as WebhookMessage);
const newKey = async (scopes: string[]) => {
  const answer = await invoke('keys-create', { method: 'POST', path: '/api/keys', headers: merchant.headers(), body: { scopes } });
  return { id: (answer.json.key as { id: string }).id, apiKey: answer.json.apiKey as string };
};
const setWebhookUrl = (url: string) => invoke('shop-config-update', { method: 'POST', path: '/api/shop/config', headers: merchant.headers(), body: { webhookUrl: url } });
const rotate = (headers = merchant.headers()) => invoke('console-webhook-secret-rotate', { method: 'POST', path: '/api/console/webhooks/secret/rotate', headers });
const withSplit = () =>
  updateMerchant(deps, wallet, (current, now) => ({
    merchant: { ...current, split: { address: '0x' + '5'.repeat(40), recipients: [], platformFeeBps: 100, partnerFeeBps: 0, txHash: '0x' + '6'.repeat(64), chainId: 31337, deployedAt: now } },
    result: undefined,
  }));
/** A sale at the console's terminal, moved to link_opened: the event's message, delivered. */
const consoleSale = async (): Promise<{ receiptId: string; request: Received }> => {
  const sold = await invoke('console-receipts-terminal', { method: 'POST', path: '/api/console/receipts/terminal', headers: merchant.headers(), body: { amountUsd: 12.5 } });
  expect(sold.status).toBe(201);
  const receiptId = (sold.json.receipt as { receiptId: string }).receiptId;
  await changeStatus(deps, { wallet, receiptId, status: 'link_opened', actor: 'merchant' });
  const before = receiver.received.length;
  for (const message of queued()) await deliverWebhook(deps, message);
  return { receiptId, request: (await receiver.waitFor(before + 1)).at(-1)! };
};
const verifies = (request: Received, secret: string) => verifyWebhook({ body: request.body, headers: request.headers, secret, now: clock.now() }).ok;
/** `<prefix>Signature` as a receiver checks it with `secret`. */
const plainSignedBy = (request: Received, secret: string) => request.headers['x-service-signature'] === `sha256=${createHmac('sha256', secret).update(request.body).digest('hex')}`;
const v1Count = (request: Received) => String(request.headers['x-service-signature-timestamped']).split(',').filter((part) => part.startsWith('v1=')).length;

beforeEach(async () => {
  offset = 0;
  deps = memoryDeps({ clock });
  setDeps(deps);
  merchant = await signInAs(testWallets.merchant);
  receiver = await startReceiver();
  await withSplit();
});
afterEach(() => receiver.close());

describe('the shop’s webhook signing secret', () => {
  it('is made when the webhook URL is first set, shown in that answer only, and signs the console’s receipts: no API key does (a read-only key cannot verify them)', async () => {
    const readOnly = await newKey(['receipts:read']);
    const set = await setWebhookUrl(receiver.url);
    expect(set.status).toBe(200);
    const secret = set.json.webhookSecret as string;
    expect(secret).toMatch(/^whsec_[a-z2-7]{52}$/);
    // Set again: the secret stays, and is not shown again.
    const again = await setWebhookUrl(receiver.url);
    expect(again.status).toBe(200);
    expect(again.json).not.toHaveProperty('webhookSecret');

    const { receiptId, request } = await consoleSale();
    expect((await deps.receipts.get(wallet, receiptId))!.value.createdBy).toBeNull();
    expect(verifies(request, secret)).toBe(true);
    expect(verifyWebhook({ body: request.body, headers: request.headers, secret: readOnly.apiKey }).ok).toBe(false);
    expect(plainSignedBy(request, secret)).toBe(true);
    expect(plainSignedBy(request, readOnly.apiKey)).toBe(false);
    const log = await invoke('console-receipts-deliveries', { path: `/api/console/receipts/${receiptId}/deliveries`, headers: merchant.headers() });
    expect(log.json).toMatchObject({ signingKey: null, signingSecret: { prefix: secret.slice(0, 10), previous: null }, deliveries: [{ state: 'delivered', signedBy: null, signedWithSecret: secret.slice(0, 10) }] });
  });

  it('leaves a receipt an API key created to that key, as the interface document says', async () => {
    const key = await newKey(['receipts:write', 'receipts:read']);
    const secret = (await setWebhookUrl(receiver.url)).json.webhookSecret as string;
    await invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: { 'x-subscription-id': key.id }, body: { id: 'R-key', lineItems: [{ label: 'Tea', priceUsd: 4 }], totalUsd: 4 } });
    await invoke('receipts-status-post', { method: 'POST', path: '/api/receipts/status', headers: { 'x-subscription-id': key.id }, body: { id: 'R-key', status: 'link_opened' } });
    for (const message of queued()) await deliverWebhook(deps, message);
    const [request] = await receiver.waitFor(1);
    expect(verifies(request!, key.apiKey)).toBe(true);
    expect(verifies(request!, secret)).toBe(false);
    expect((await invoke('receipts-deliveries', { path: '/api/receipts/R-key/deliveries', headers: { 'x-subscription-id': key.id } })).json).toMatchObject({ signingKey: { id: key.id }, signingSecret: null, deliveries: [{ signedBy: key.id, signedWithSecret: null }] });
  });

  it('rotates: for the overlap both the old and the new secret sign each delivery, after it only the new one', async () => {
    const old = (await setWebhookUrl(receiver.url)).json.webhookSecret as string;
    const { 'x-csrf-token': _, ...noCsrf } = merchant.headers();
    expect((await rotate(noCsrf)).status).toBe(403);
    expect((await invoke('console-webhook-secret-rotate', { method: 'POST', path: '/api/console/webhooks/secret/rotate' })).status).toBe(401);
    const rotated = await rotate();
    expect(rotated.status).toBe(200);
    const fresh = rotated.json.webhookSecret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    const until = clock.now() + WEBHOOK_SECRET_OVERLAP_MS;
    expect(rotated.json.signingSecret).toEqual({ prefix: fresh.slice(0, 10), createdAt: expect.any(Number), previous: { prefix: old.slice(0, 10), until: expect.any(Number) } });
    expect(Math.abs((rotated.json.signingSecret as { previous: { until: number } }).previous.until - until)).toBeLessThan(1_000);

    const during = (await consoleSale()).request;
    expect(v1Count(during)).toBe(2);
    expect(verifies(during, fresh)).toBe(true);
    expect(verifies(during, old)).toBe(true);
    expect(verifies(during, 'whsec_another')).toBe(false);
    // The plain signature holds one: the old secret's until the overlap ends, so an unchanged receiver keeps working.
    expect(plainSignedBy(during, old)).toBe(true);

    offset += WEBHOOK_SECRET_OVERLAP_MS + 1_000;
    merchant = await signInAs(testWallets.merchant, clock.now());
    const after = (await consoleSale()).request;
    expect(v1Count(after)).toBe(1);
    expect(verifies(after, fresh)).toBe(true);
    expect(verifies(after, old)).toBe(false);
    expect(plainSignedBy(after, fresh)).toBe(true);
  });

  it('is never in a GET answer, nor stored in clear', async () => {
    const key = await newKey(['shop:read', 'receipts:read']);
    const first = (await setWebhookUrl(receiver.url)).json.webhookSecret as string;
    const secret = (await rotate()).json.webhookSecret as string;
    const { receiptId } = await consoleSale();
    const answers = [
      await invoke('shop-config-get', { path: '/api/shop/config', headers: { 'x-subscription-id': key.id } }),
      await invoke('console-receipts-deliveries', { path: `/api/console/receipts/${receiptId}/deliveries`, headers: merchant.headers() }),
      await invoke('console-receipts-get', { path: `/api/console/receipts/${receiptId}`, headers: merchant.headers() }),
      await invoke('auth-me', { path: '/api/auth/me', headers: merchant.headers() }),
    ];
    const pages = await Promise.all(['overview', 'settings', 'webhooks', 'terminal', 'receipts'].map((slug) => adminPage(deps, { session: { id: 's', wallet, csrfHash: 'x', createdAt: 0, expiresAt: Number.MAX_SAFE_INTEGER, revokedAt: null }, wallet }, slug, { id: receiptId })));
    const stored = JSON.stringify((await deps.merchants.get(wallet, wallet))!.value);
    for (const text of [...answers.map((answer) => JSON.stringify(answer.json)), ...pages.map((page) => (typeof page === 'string' ? page : String(page.body))), stored]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(first);
    }
    // Sealed: the record opens to the secret with the deployment's key only.
    const signing = (await deps.merchants.get(wallet, wallet))!.value.webhookSigning!;
    expect(deps.secretBox.open(signing.current.sealed)).toBe(secret);
    expect(deps.secretBox.open(signing.previous!.sealed)).toBe(first);
  });

  it('without one yet (a shop whose URL was set before secrets existed) the delivery says to make one; made in the console, the redelivery verifies', async () => {
    await updateMerchant(deps, wallet, (current) => ({ merchant: { ...current, shop: { ...current.shop, webhookUrl: receiver.url } }, result: undefined }));
    await newKey(['receipts:read']);
    const sold = await invoke('console-receipts-terminal', { method: 'POST', path: '/api/console/receipts/terminal', headers: merchant.headers(), body: { amountUsd: 3 } });
    const receiptId = (sold.json.receipt as { receiptId: string }).receiptId;
    await changeStatus(deps, { wallet, receiptId, status: 'link_opened', actor: 'merchant' });
    const [message] = queued();
    await deliverWebhook(deps, message!);
    expect(receiver.received).toEqual([]);
    const path = `/api/console/receipts/${receiptId}/deliveries`;
    expect((await invoke('console-receipts-deliveries', { path, headers: merchant.headers() })).json).toMatchObject({
      signingKey: null,
      signingSecret: null,
      deliveries: [{ state: 'failed', signedBy: null, signedWithSecret: null, error: expect.stringMatching(/no webhook signing secret/) }],
    });
    const made = await rotate();
    expect(made.json).toMatchObject({ webhookSecret: expect.stringMatching(/^whsec_/), signingSecret: { previous: null } });
    const again = await invoke('console-receipts-redeliver', { method: 'POST', path: `${path}/${message!.eventId}/redeliver`, headers: merchant.headers() });
    expect(again.json).toMatchObject({ delivered: true });
    const [request] = await receiver.waitFor(1);
    expect(verifies(request!, made.json.webhookSecret as string)).toBe(true);
  });
});

describe('the console’s test event', () => {
  const send = (body: unknown) => invoke('console-webhooks-test', { method: 'POST', path: '/api/console/webhooks/test', headers: merchant.headers(), body });

  it('is signed by the shop’s webhook secret unless a key is named; with neither it is refused (400)', async () => {
    expect(await send({ url: receiver.url })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'keyId' } });
    const key = await newKey(['receipts:write']);
    const secret = (await setWebhookUrl(receiver.url)).json.webhookSecret as string;
    expect(await send({ url: receiver.url })).toMatchObject({ status: 200, json: { delivered: true } });
    expect(await send({ url: receiver.url, keyId: key.id })).toMatchObject({ status: 200, json: { delivered: true } });
    const [bySecret, byKey] = await receiver.waitFor(2);
    expect(verifies(bySecret!, secret)).toBe(true);
    expect(verifies(bySecret!, key.apiKey)).toBe(false);
    expect(verifies(byKey!, key.apiKey)).toBe(true);
  });
});
