import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { applyOnrampWebhook, openOnrampSession } from '../../shared/app/onramp';
import type { AppDeps } from '../../shared/app/deps';
import { createReceipt } from '../../shared/app/receipts';
import { compose, setDeps } from '../../shared/composition';
import { loadConfig } from '../../shared/config';
import { merchantRecordWithSplit } from '../support/chain-merchant';
import { invoke } from '../support/http';
import { toWebhookBody } from '../../shared/domain/receipt-views';
import { signStripeWebhook, startStripeFake, stripeEventBody, sessionAt, stripeSessionWebhook, type FakeSession, type StripeFake } from '../support/stripe-fake';

/**
 * Stripe as the card on-ramp, wired as a deployment wires it (ONRAMP_PROVIDER=stripe, the SDK pointed
 * at a local fake of Stripe's API by STRIPE_API_URL): the portal's session request carries the
 * receipt's quote to its deposit address on Base Sepolia, and Stripe's signed `crypto.onramp_session_updated`
 * events move the receipt, each once.
 */
const TEST_KEY = 'sk_test_51OnrampCompositionTest';
const WEBHOOK_SECRET = 'whsec_onramp_composition_test_secret';
const BASE_SEPOLIA = 84532;
const chainInfo = inject('chain');

let fake: StripeFake;
let deps: AppDeps;
const merchant = Wallet.createRandom().address.toLowerCase();
const split = Wallet.createRandom().address.toLowerCase();

beforeAll(async () => {
  fake = await startStripeFake({ secretKey: TEST_KEY });
  const config = loadConfig({
    STORE: 'memory',
    APP_ENV: 'development',
    ONRAMP_PROVIDER: 'stripe',
    STRIPE_SECRET_KEY: TEST_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_URL: fake.origin,
    // Base Sepolia by its id (what a test-mode Stripe key serves); quoting USDC reads nothing from the node.
    CHAIN_ID: String(BASE_SEPOLIA),
    CHAIN_RPC_URL: chainInfo.rpcUrl,
    SPLIT_FACTORY_ADDRESS: chainInfo.splitFactory,
    RELAYER_PRIVATE_KEY: Wallet.createRandom().privateKey,
    USDC_ADDRESS: chainInfo.usdc,
    DEPOSIT_FACTORY_ADDRESS: chainInfo.depositFactory,
  });
  deps = compose(config).deps;
  await deps.merchants.upsert(merchant, merchantRecordWithSplit(merchant, { address: split, platform: Wallet.createRandom().address.toLowerCase(), txHash: `0x${'1'.repeat(64)}`, chainId: BASE_SEPOLIA }));
});
afterAll(async () => {
  await fake?.close();
});

let serial = 0;
const newReceipt = async (extra: { redirect_url?: string } = {}) => {
  const id = `stripe-${++serial}-${Date.now()}`;
  await createReceipt(deps, { wallet: merchant, subscriptionId: null }, { id, lineItems: [{ label: 'Tea', priceUsd: 12.5 }], totalUsd: 12.5, ...extra });
  return id;
};
const receiptOf = async (id: string) => (await deps.receipts.get(merchant, id))!.value;
const deliver = (webhook: { body: string; headers: Headers }) => applyOnrampWebhook(deps, 'stripe', webhook.body, webhook.headers);

describe('Stripe as the card on-ramp', () => {
  it("opens a Stripe session for the receipt's USDC quote, to the receipt's deposit address on Base Sepolia, with redirect_url", async () => {
    const id = await newReceipt({ redirect_url: 'https://shop.example/done' });
    const session = await openOnrampSession(deps, id, '203.0.113.7');
    const sent = fake.requests.at(-1)!;
    const deposit = (await receiptOf(id)).deposit!;
    expect(deposit.split).toBe(split);
    expect(deposit.address).toBe(session.quote.payTo);
    expect(sent.form).toMatchObject({
      'wallet_addresses[base_network]': deposit.address,
      destination_network: 'base',
      destination_currency: 'usdc',
      destination_amount: session.quote.display,
      source_currency: 'usd',
      redirect_url: 'https://shop.example/done',
      customer_ip_address: '203.0.113.7',
      'metadata[receiptId]': id,
      'metadata[quoteId]': session.quote.quoteId,
    });
    expect(session).toMatchObject({ provider: 'stripe', url: `${fake.origin}/onramp/${session.sessionId}` });
    expect(session.clientSecret).toMatch(/_secret_/);
    expect(await receiptOf(id)).toMatchObject({ onrampSessionId: session.sessionId, isOnrampSessionUnique: true });
  });

  it("names the client by the address the gateway set (x-client-address), not a forwarded entry the client or a front end wrote", async () => {
    setDeps(deps);
    const id = await newReceipt();
    const answer = await invoke('portal-onramp', { method: 'POST', path: `/api/portal/${id}/onramp`, headers: { 'x-forwarded-for': '6.6.6.6, 10.1.2.3', 'x-client-address': '203.0.113.7' } });
    expect(answer.status).toBe(200);
    expect(fake.requests.at(-1)!.form).toMatchObject({ customer_ip_address: '203.0.113.7', 'metadata[receiptId]': id });
  });

  it('moves the receipt with each signed event: initialized → checkout_initialized, fulfillment_processing → checkout_success, each once', async () => {
    const id = await newReceipt();
    const { sessionId } = await openOnrampSession(deps, id, null);
    const session = fake.sessions.get(sessionId)!;
    const created = stripeSessionWebhook(session, 'initialized', { secret: WEBHOOK_SECRET });
    expect(await deliver(created)).toMatchObject({ applied: true, status: 'checkout_initialized' });
    expect(await deliver(created)).toMatchObject({ applied: false });
    expect(await deliver(stripeSessionWebhook(session, 'requires_payment', { secret: WEBHOOK_SECRET }))).toMatchObject({ applied: false });
    expect(await deliver(stripeSessionWebhook(session, 'fulfillment_processing', { secret: WEBHOOK_SECRET }))).toMatchObject({ applied: true, status: 'checkout_success' });
    const receipt = await receiptOf(id);
    expect(toWebhookBody(receipt, Date.now())).toMatchObject({ status: 'checkout_success', onrampSessionId: sessionId, isOnrampSessionUnique: true, onrampSourceAmountUsd: 12.87 });
    // Delivered: its transaction is looked up on the chain (this one is on no chain): nothing is paid by
    // Stripe's word alone, and the event is left unapplied (503) for Stripe to send again.
    const delivered = stripeSessionWebhook(session, 'fulfillment_complete', { secret: WEBHOOK_SECRET });
    await expect(deliver(delivered)).rejects.toMatchObject({ name: 'DependencyUnavailableError' });
    expect((await receiptOf(id)).status).toBe('checkout_success');
    expect((await receiptOf(id)).onramp?.state).toBe('processing');
    // While the card payment is delivered, no second session opens (a card is never charged twice).
    await expect(openOnrampSession(deps, id, null)).rejects.toMatchObject({ code: 'conflict' });
  });

  it("a rejection fails the receipt with the mapped code and Stripe's own code and request id; an unknown code is generic", async () => {
    const declined = await newReceipt();
    const first = fake.sessions.get((await openOnrampSession(deps, declined, null)).sessionId)!;
    await deliver(stripeSessionWebhook(first, 'rejected', { secret: WEBHOOK_SECRET, requestId: 'req_stripe_1', details: { last_error: { code: 'card_declined' } } }));
    expect((await receiptOf(declined)).failure).toMatchObject({ failureCode: 'PORTAL_PAY_CARD_DECLINED', failureCategory: 'card_decline', providerErrorCode: 'card_declined', providerRequestId: 'req_stripe_1' });

    const odd = await newReceipt();
    const second = fake.sessions.get((await openOnrampSession(deps, odd, null)).sessionId)!;
    await deliver(stripeSessionWebhook(second, 'rejected', { secret: WEBHOOK_SECRET, details: { last_error: { code: 'something_new' } } }));
    expect((await receiptOf(odd)).failure).toMatchObject({ failureCode: 'PORTAL_SYS_GENERIC_FAILURE', providerErrorCode: 'something_new' });
  });

  it("a session Stripe refuses to open fails the receipt with the mapped code (409 onramp_refused); Stripe down is 503", async () => {
    const id = await newReceipt();
    fake.fail({ status: 400, code: 'crypto_onramp_unsupportable_customer', message: 'This customer cannot use the onramp.' });
    await expect(openOnrampSession(deps, id, null)).rejects.toMatchObject({ code: 'onramp_refused', details: { failureCode: 'PORTAL_REGION_UNSUPPORTED' } });
    expect((await receiptOf(id)).failure).toMatchObject({ failureCode: 'PORTAL_REGION_UNSUPPORTED', providerErrorCode: 'crypto_onramp_unsupportable_customer' });
    fake.fail({ status: 500, message: 'Stripe is having a bad day.' }, { status: 500, message: 'still' }, { status: 500, message: 'still' }, { status: 500, message: 'still' });
    await expect(openOnrampSession(deps, id, null)).rejects.toMatchObject({ name: 'DependencyUnavailableError' });
    // Nothing is left locked: the next attempt opens a session.
    while (fake.requests.length > 0 && (await openOnrampSession(deps, id, null).then(() => false).catch(() => true))) fake.requests.length = 0;
    expect((await receiptOf(id)).onramp?.state).toBe('created');
  });

  it('refuses a webhook signed with another secret, or too old, and changes nothing', async () => {
    const id = await newReceipt();
    const session: FakeSession = fake.sessions.get((await openOnrampSession(deps, id, null)).sessionId)!;
    const body = stripeEventBody(sessionAt(session, 'rejected'));
    await expect(deliver(signStripeWebhook(body, 'whsec_someone_else'))).rejects.toMatchObject({ code: 'invalid_signature' });
    await expect(deliver(signStripeWebhook(body, WEBHOOK_SECRET, Math.floor(Date.now() / 1000) - 3_600))).rejects.toMatchObject({ code: 'invalid_signature' });
    await expect(applyOnrampWebhook(deps, 'sandbox', body, signStripeWebhook(body, WEBHOOK_SECRET).headers)).rejects.toMatchObject({ code: 'not_found' });
    expect((await receiptOf(id)).status).toBe('pending');
  });
});
