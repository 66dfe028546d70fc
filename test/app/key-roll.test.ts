import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MemoryEventQueue } from '../../shared/adapters/memory/deliveries';
import { ROLL_PAGES_PER_CALL, ROLL_PAGE_SIZE, createApiKey, revokeApiKey, rollMerchantKey } from '../../shared/app/api-keys';
import type { AppDeps } from '../../shared/app/deps';
import { changeStatus, type WebhookMessage } from '../../shared/app/receipt-status';
import { createReceipt } from '../../shared/app/receipts';
import { deliverWebhook, listDeliveries, redeliver } from '../../shared/app/webhooks';
import { memoryDeps, setDeps } from '../../shared/composition';
import { newReceipt } from '../../shared/domain/receipt';
import { verifyWebhook } from '../../shared/webhook-verify.mjs';
import { invoke } from '../support/http';
import { signInAs, type SignedInBrowser } from '../support/session';
import { testWallets } from '../support/siwe';
import { startReceiver } from '../support/receiver';
import { allStores, wallets } from '../support/stores';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

/** Which of the keys a received webhook verifies with. */
const verifiesWith = (request: { body: string; headers: Record<string, unknown> }, keys: Record<string, string>) =>
  Object.entries(keys)
    .filter(([, secret]) => verifyWebhook({ body: request.body, headers: request.headers as never, secret }).ok)
    .map(([name]) => name);

describe.each(allStores)('rolling a revoked key on $name', (store) => {
  let deps: AppDeps;
  let queue: MemoryEventQueue;
  let wallet: string;
  let oldKey: { id: string; apiKey: string };
  let newKey: { id: string; apiKey: string };
  let serial = 0;

  const key = async (owner: string) => {
    const { subscription, apiKey } = await createApiKey(deps, { wallet: owner, scopes: ['receipts:write'], plan: 'development', brand: 'default' });
    return { id: subscription.id, apiKey };
  };
  const receiptBy = async (signer: string | null, status?: 'paid') => {
    const id = `roll-${store.name}-${++serial}`;
    await createReceipt(deps, { wallet, subscriptionId: signer }, { id, lineItems: [{ label: 'Tea', priceUsd: 4 }], totalUsd: 4, webhook_url: receiver.url });
    if (status) await changeStatus(deps, { wallet, receiptId: id, status, actor: 'service' });
    queue.take('webhooks');
    return id;
  };
  const signerOf = async (id: string) => (await deps.receipts.get(wallet, id))!.value.createdBy;
  /** Moves a receipt on and delivers its event now: answers the request the receiver got. */
  const nextWebhook = async (id: string, status: 'link_opened' | 'checkout_success' | 'reconciled' = 'link_opened') => {
    await changeStatus(deps, { wallet, receiptId: id, status, actor: status === 'reconciled' ? 'service' : 'merchant' });
    const [entry] = queue.take('webhooks');
    const before = receiver.received.length;
    await deliverWebhook(deps, entry!.message as WebhookMessage);
    return (await receiver.waitFor(before + 1)).at(-1)!;
  };

  beforeEach(async () => {
    queue = new MemoryEventQueue();
    deps = await store.make({ queue });
    wallet = `0x${String(++serial).padStart(4, '0')}${'c3'.repeat(18)}`;
    oldKey = await key(wallet);
    newKey = await key(wallet);
  });

  it('re-signs the revoked key’s open receipts: their next webhook verifies with the new key and not the old', async () => {
    const open = await receiptBy(oldKey.id);
    const paid = await receiptBy(oldKey.id, 'paid');
    const others = await receiptBy(newKey.id);
    const before = await nextWebhook(open);
    expect(verifiesWith(before, { old: oldKey.apiKey, new: newKey.apiKey })).toEqual(['old']);

    await revokeApiKey(deps, oldKey.id, wallet);
    expect(await rollMerchantKey(deps, wallet, oldKey.id, { toKeyId: newKey.id })).toEqual({ ok: true, id: oldKey.id, toKeyId: newKey.id, moved: 2, nextCursor: null });
    expect([await signerOf(open), await signerOf(paid), await signerOf(others)]).toEqual([newKey.id, newKey.id, newKey.id]);

    const after = await nextWebhook(open, 'checkout_success');
    expect(JSON.parse(after.body)).toMatchObject({ receiptId: open, status: 'checkout_success' });
    expect(verifiesWith(after, { old: oldKey.apiKey, new: newKey.apiKey })).toEqual(['new']);
    // a paid receipt is still open: its reconciliation's webhook verifies with the new key too
    expect(verifiesWith(await nextWebhook(paid, 'reconciled'), { old: oldKey.apiKey, new: newKey.apiKey })).toEqual(['new']);
  });

  it('is idempotent: a second roll moves nothing, and a receipt refunded in full stays with the key that signed it', async () => {
    const open = await receiptBy(oldKey.id);
    const refunded = await receiptBy(oldKey.id);
    const stored = (await deps.receipts.get(wallet, refunded))!;
    const refund = { refundId: 'rf-1', requestedAt: 1, amountUsd: stored.value.customerTotalUsd, token: 'USDC' as const, tokenAddress: null, amount: '1', from: wallet, to: wallet, uri: 'ethereum:x', reason: null, txHash: '0x1', refundedAt: 2 };
    await deps.receipts.replace(wallet, { ...stored.value, status: 'refunded', refunds: [refund] }, stored.etag);
    await revokeApiKey(deps, oldKey.id, wallet);

    expect((await rollMerchantKey(deps, wallet, oldKey.id, { toKeyId: newKey.id })).moved).toBe(1);
    expect((await rollMerchantKey(deps, wallet, oldKey.id, { toKeyId: newKey.id })).moved).toBe(0);
    expect([await signerOf(open), await signerOf(refunded)]).toEqual([newKey.id, oldKey.id]);
  });

  it('leaves the receipt’s updatedAt alone and moves its events not yet queued', async () => {
    const id = await receiptBy(oldKey.id);
    const send = deps.queue.send.bind(deps.queue);
    deps.queue.send = async () => Promise.reject(new Error('queue down'));
    await changeStatus(deps, { wallet, receiptId: id, status: 'link_opened', actor: 'merchant' });
    deps.queue.send = send;
    const held = (await deps.receipts.get(wallet, id))!.value;
    expect(held.pendingEvents.map((event) => event.signingSubscriptionId)).toEqual([oldKey.id]);

    await revokeApiKey(deps, oldKey.id, wallet);
    await rollMerchantKey(deps, wallet, oldKey.id, { toKeyId: newKey.id });
    const rolled = (await deps.receipts.get(wallet, id))!.value;
    expect(rolled.pendingEvents.map((event) => event.signingSubscriptionId)).toEqual([newKey.id]);
    expect(rolled.updatedAt).toBe(held.updatedAt);
  });

  it('signs with the new key an event queued before the roll and its redelivery; the log says who signed and whether the key is revoked', async () => {
    const id = await receiptBy(oldKey.id);
    await changeStatus(deps, { wallet, receiptId: id, status: 'link_opened', actor: 'merchant' });
    const [queued] = queue.take('webhooks');
    await revokeApiKey(deps, oldKey.id, wallet);
    expect((await listDeliveries(deps, wallet, id)).signingKey).toEqual({ id: oldKey.id, prefix: oldKey.apiKey.slice(0, 8), revoked: true });

    await rollMerchantKey(deps, wallet, oldKey.id, { toKeyId: newKey.id });
    const before = receiver.received.length;
    await deliverWebhook(deps, queued!.message as WebhookMessage);
    const [sent] = (await receiver.waitFor(before + 1)).slice(before);
    expect(verifiesWith(sent!, { old: oldKey.apiKey, new: newKey.apiKey })).toEqual(['new']);

    const again = await redeliver(deps, wallet, id, (queued!.message as WebhookMessage).eventId);
    expect(again).toMatchObject({ delivered: true, attempt: 2 });
    const [resent] = (await receiver.waitFor(before + 2)).slice(before + 1);
    expect(verifiesWith(resent!, { old: oldKey.apiKey, new: newKey.apiKey })).toEqual(['new']);
    const log = await listDeliveries(deps, wallet, id);
    expect(log.signingKey).toEqual({ id: newKey.id, prefix: newKey.apiKey.slice(0, 8), revoked: false });
    expect(log.deliveries.map((attempt) => [attempt.attempt, attempt.state, attempt.signedBy])).toEqual([
      [1, 'delivered', newKey.id],
      [2, 'delivered', newKey.id],
    ]);
  });

  it('without a roll, a revoked key still signs its receipts’ events (the interface document), and the log says it is revoked', async () => {
    const id = await receiptBy(oldKey.id);
    await revokeApiKey(deps, oldKey.id, wallet);
    const sent = await nextWebhook(id);
    expect(verifiesWith(sent, { old: oldKey.apiKey, new: newKey.apiKey })).toEqual(['old']);
    const log = await listDeliveries(deps, wallet, id);
    expect(log.signingKey).toMatchObject({ id: oldKey.id, revoked: true });
    expect(log.deliveries[0]).toMatchObject({ state: 'delivered', signedBy: oldKey.id });
  });
});

describe('rolling in bounded batches', () => {
  it(`moves at most ${ROLL_PAGES_PER_CALL} pages of ${ROLL_PAGE_SIZE} a call and goes on from nextCursor`, async () => {
    const deps = memoryDeps();
    const wallet = wallets.alice;
    const { subscription: old } = await createApiKey(deps, { wallet, scopes: ['receipts:write'], plan: 'development', brand: 'default' });
    const { subscription: next } = await createApiKey(deps, { wallet, scopes: ['receipts:write'], plan: 'development', brand: 'default' });
    const total = ROLL_PAGES_PER_CALL * ROLL_PAGE_SIZE + 7;
    for (let i = 0; i < total; i++) {
      const receipt = newReceipt(
        { receiptId: `b-${i}`, wallet, brandKey: 'default', brandName: 'Demo', status: 'pending', lineItems: [{ label: 'Tea', priceUsd: 1 }], totalUsd: 1, customerTotalUsd: 1, jurisdictionCode: null, taxRate: null, source: 'api', createdBy: old.id },
        1_000 + i,
      );
      await deps.receipts.create(wallet, receipt);
    }
    await revokeApiKey(deps, old.id, wallet);
    const first = await rollMerchantKey(deps, wallet, old.id, { toKeyId: next.id });
    expect(first).toMatchObject({ moved: ROLL_PAGES_PER_CALL * ROLL_PAGE_SIZE, nextCursor: expect.any(String) });
    const second = await rollMerchantKey(deps, wallet, old.id, { toKeyId: next.id, cursor: first.nextCursor! });
    expect(second).toMatchObject({ moved: 7, nextCursor: null });
    expect((await deps.receipts.listByWallet(wallet, { limit: 10, createdBy: old.id })).receipts).toEqual([]);
  });
});

describe('POST /api/keys/{id}/roll', () => {
  let deps: AppDeps;
  let merchant: SignedInBrowser;
  const createKey = async (browser: SignedInBrowser) => ((await invoke('keys-create', { method: 'POST', path: '/api/keys', headers: browser.headers(), body: { scopes: ['receipts:write'] } })).json.key as { id: string }).id;
  const revoke = (browser: SignedInBrowser, id: string) => invoke('keys-revoke', { method: 'DELETE', path: `/api/keys/${id}`, headers: browser.headers() });
  const roll = (headers: Record<string, string>, id: string, body: unknown) => invoke('keys-roll', { method: 'POST', path: `/api/keys/${id}/roll`, headers, body });

  beforeEach(async () => {
    deps = memoryDeps();
    setDeps(deps);
    merchant = await signInAs(testWallets.merchant);
  });

  it('answers how many receipts moved, then 0 when asked again', async () => {
    const [old, next] = [await createKey(merchant), await createKey(merchant)];
    await invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: { 'x-subscription-id': old }, body: { id: 'R-roll-1', lineItems: [{ label: 'Tea', priceUsd: 4 }], totalUsd: 4 } });
    await revoke(merchant, old);
    expect(await roll(merchant.headers(), old, { toKeyId: next })).toMatchObject({ status: 200, json: { ok: true, id: old, toKeyId: next, moved: 1, nextCursor: null } });
    expect(await roll(merchant.headers(), old, { toKeyId: next })).toMatchObject({ status: 200, json: { moved: 0 } });
    const log = await invoke('console-receipts-deliveries', { path: '/api/console/receipts/R-roll-1/deliveries', headers: merchant.headers() });
    expect(log).toMatchObject({ status: 200, json: { deliveries: [], signingKey: { id: next, revoked: false } } });
  });

  it('refuses with stable codes: an active key, another wallet’s or an unknown key, a revoked or unknown target, the same key', async () => {
    const other = await signInAs(testWallets.other);
    const [old, next, spare, foreign] = [await createKey(merchant), await createKey(merchant), await createKey(merchant), await createKey(other)];
    expect(await roll(merchant.headers(), old, { toKeyId: next })).toMatchObject({ status: 409, json: { error: 'key_active', field: 'id' } });
    await revoke(merchant, old);
    await revoke(merchant, spare);
    expect(await roll(other.headers(), old, { toKeyId: foreign })).toMatchObject({ status: 404, json: { error: 'not_found' } });
    expect(await roll(merchant.headers(), 'sub_nothing', { toKeyId: next })).toMatchObject({ status: 404, json: { error: 'not_found' } });
    expect(await roll(merchant.headers(), old, { toKeyId: foreign })).toMatchObject({ status: 400, json: { error: 'target_key_not_found', field: 'toKeyId' } });
    expect(await roll(merchant.headers(), old, { toKeyId: 'sub_nothing' })).toMatchObject({ status: 400, json: { error: 'target_key_not_found', field: 'toKeyId' } });
    expect(await roll(merchant.headers(), old, { toKeyId: spare })).toMatchObject({ status: 409, json: { error: 'target_key_revoked', field: 'toKeyId' } });
    expect(await roll(merchant.headers(), old, { toKeyId: old })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'toKeyId' } });
    expect(await roll(merchant.headers(), old, {})).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'toKeyId' } });
    expect(await roll(merchant.headers(), old, { toKeyId: next, cursor: 'not-a-cursor' })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'cursor' } });
    // A key made before keys carried a signing key could not sign the receipts it would take.
    const { signingKey: _, ...unsigned } = (await deps.subscriptions.get(next))!;
    await deps.subscriptions.update(unsigned);
    expect(await roll(merchant.headers(), old, { toKeyId: next })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'toKeyId', message: expect.stringContaining('no signing key') } });
  });

  it('needs a session (401) and the CSRF header (403)', async () => {
    const old = await createKey(merchant);
    expect((await roll({}, old, { toKeyId: old })).status).toBe(401);
    const { 'x-csrf-token': _, ...noCsrf } = merchant.headers();
    expect((await roll(noCsrf, old, { toKeyId: old })).status).toBe(403);
  });
});
