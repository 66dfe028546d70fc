import { Contract, type NonceManager, type Wallet, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { EvmChain } from '../../shared/adapters/evm/chain';
import { createProvider } from '../../shared/adapters/evm/provider';
import { SANDBOX_SIGNATURE_HEADER, sandboxOnramp, sandboxSignature } from '../../shared/adapters/onramp/sandbox';
import type { AppDeps } from '../../shared/app/deps';
import { applyOnrampWebhook, openOnrampSession } from '../../shared/app/onramp';
import { SANDBOX_SUCCESS, sandboxCharge, sandboxCheckout, sandboxFinish, sandboxOutcomes } from '../../shared/app/onramp-sandbox';
import { getPortalView, quoteFor } from '../../shared/app/payments/portal';
import { expireReceipts } from '../../shared/app/payments/expiry';
import { verifyPayment } from '../../shared/app/payments/verify';
import { createReceipt } from '../../shared/app/receipts';
import { failureInfo, type FailureCode } from '../../shared/domain/failures';
import { toWebhookBody } from '../../shared/domain/receipt-views';
import type { OnrampProvider } from '../../shared/ports/onramp';
import { merchantWithSplit, testAccounts } from '../support/chain-merchant';
import { allStores } from '../support/stores';

/**
 * Card payments below HTTP, on the run's anvil chain with every store adapter: the sandbox provider
 * (real signatures, real USDC transfers) opens sessions, its webhooks move the receipt, the chain
 * decides `paid`; every sandbox failure outcome fails the receipt with its exact code, and the
 * receipt can still be paid by wallet; forged, altered, stale and replayed webhooks change nothing.
 */
const chainInfo = inject('chain');
const SECRET = 'sandbox-secret-for-the-onramp-tests';
const BASE_URL = 'http://service.test';
let provider: JsonRpcProvider;
let accounts: Awaited<ReturnType<typeof testAccounts>>;

const erc20 = (address: string, signer: Wallet | NonceManager) => new Contract(address, testUsdcArtifact.abi, signer);
const newWallet = () => accounts.newWallet([chainInfo.usdc]);

beforeAll(async () => {
  provider = createProvider(chainInfo.rpcUrl, chainInfo.chainId);
  accounts = await testAccounts(provider);
});
afterAll(() => provider.destroy());

describe.each(allStores)('card payments through the sandbox on-ramp on $name', (store) => {
  let deps: AppDeps;
  let chain: EvmChain;
  let merchant: string;
  let split: string;
  /** Every webhook the sandbox sent, as sent (body and headers), for replays. */
  const sent: Array<{ body: string; headers: Record<string, string> }> = [];

  beforeAll(async () => {
    const relayer = await newWallet();
    const sandboxFunder = await newWallet();
    chain = new EvmChain({ rpcUrl: chainInfo.rpcUrl, chainId: chainInfo.chainId, relayerPrivateKey: relayer.privateKey, splitFactory: chainInfo.splitFactory, tokens: [chainInfo.usdc, chainInfo.usdt], depositFactory: chainInfo.depositFactory });
    const sandbox = sandboxOnramp({
      baseUrl: BASE_URL,
      secret: SECRET,
      funderKey: sandboxFunder.privateKey,
      chain: { rpcUrl: chainInfo.rpcUrl, chainId: chainInfo.chainId },
      send: async (body, headers) => {
        sent.push({ body, headers });
        await applyOnrampWebhook(deps, 'sandbox', body, new Headers(headers));
      },
    });
    const base = await store.make({ chain, onramp: sandbox.provider, onrampSandbox: sandbox.desk });
    deps = {
      ...base,
      settings: {
        ...base.settings,
        baseUrl: BASE_URL,
        tokens: [
          { symbol: 'USDC', address: chainInfo.usdc, decimals: 6 },
          { symbol: 'USDT', address: chainInfo.usdt, decimals: 6 },
        ],
        payments: { ...base.settings.payments, confirmations: 1 },
      },
    };
    ({ merchant, split } = await merchantWithSplit(deps, chain));
  }, 60_000);
  afterAll(() => chain.destroy());

  let serial = 0;
  const newReceipt = async (extra: { redirect_url?: string } = {}) => {
    const id = `card-${store.name}-${++serial}-${Date.now()}`;
    await createReceipt(
      deps,
      { wallet: merchant, subscriptionId: null },
      { id, lineItems: [{ label: 'Beans', priceUsd: 18.5 }], totalUsd: 18.5, webhook_url: 'https://merchant.example/hooks', ...extra },
    );
    return id;
  };
  const receiptOf = async (id: string) => (await deps.receipts.get(merchant, id))!.value;

  it('a card payment: session to the receipt’s deposit address for the USDC quote, then checkout_initialized → checkout_success → paid from the chain', async () => {
    const id = await newReceipt({ redirect_url: 'https://shop.example/thanks' });
    expect((await getPortalView(deps, id)).card).toEqual({ provider: 'sandbox' });
    const session = await openOnrampSession(deps, id, null);
    expect(session).toMatchObject({ ok: true, provider: 'sandbox', url: `${BASE_URL}/onramp/sandbox/${session.sessionId}` });
    const deposit = (await receiptOf(id)).deposit!.address;
    expect(deposit).not.toBe(split);
    expect(session.quote).toMatchObject({ token: 'USDC', payTo: deposit, tokenAddress: chainInfo.usdc });
    // A second click: the same session.
    expect((await openOnrampSession(deps, id, null)).sessionId).toBe(session.sessionId);
    expect(await receiptOf(id)).toMatchObject({ status: 'pending', onrampSessionId: session.sessionId, isOnrampSessionUnique: true });

    const page = await sandboxCheckout(deps, session.sessionId);
    expect(page).toMatchObject({ receiptId: id, destination: deposit, usdc: session.quote.display, closed: null });
    expect((await receiptOf(id)).status).toBe('checkout_initialized');
    // Opening the page again sends the same event: applied once.
    await sandboxCheckout(deps, session.sessionId);
    expect((await receiptOf(id)).statusHistory.filter((change) => change.status === 'checkout_initialized')).toHaveLength(1);

    const balanceBefore: bigint = await erc20(chainInfo.usdc, accounts.funder).getFunction('balanceOf').staticCall(deposit);
    const next = await sandboxFinish(deps, session.sessionId, SANDBOX_SUCCESS);
    expect(next).toBe('https://shop.example/thanks');
    const receipt = await receiptOf(id);
    expect(receipt.statusHistory.map((change) => change.status)).toEqual(['checkout_initialized', 'checkout_success', 'paid']);
    const charge = sandboxCharge(Number(session.quote.display));
    // $18.69 of USDC ($18.50 and the 1 % processing fee, exactly) at 2.9 % + $0.30.
    expect(receipt.customerTotalUsd).toBe(18.69);
    expect(session.quote.amount).toBe('18690000');
    expect(charge).toBe(19.53);
    expect(receipt).toMatchObject({ status: 'paid', token: 'USDC', amountPaid: session.quote.amount, onrampSessionId: session.sessionId, isOnrampSessionUnique: true, onrampSourceAmountUsd: charge });
    expect(charge).toBeGreaterThan(receipt.customerTotalUsd);
    const balanceAfter: bigint = await erc20(chainInfo.usdc, accounts.funder).getFunction('balanceOf').staticCall(deposit);
    expect(balanceAfter - balanceBefore).toBe(BigInt(session.quote.amount));
    const mined = await provider.getTransactionReceipt(receipt.transactionHash!);
    expect(mined?.status).toBe(1);
    // The webhook of each change carries the on-ramp fields.
    const body = toWebhookBody(receipt, Date.now());
    expect(body).toMatchObject({ status: 'paid', onrampSessionId: session.sessionId, isOnrampSessionUnique: true, onrampSourceAmountUsd: charge, failureCode: null });
    // Paid: the sandbox refuses another outcome, and a session cannot be opened again.
    await expect(sandboxFinish(deps, session.sessionId, SANDBOX_SUCCESS)).rejects.toMatchObject({ code: 'conflict' });
    await expect(openOnrampSession(deps, id, null)).rejects.toMatchObject({ code: 'receipt_not_payable' });
  }, 60_000);

  it('every sandbox failure outcome fails the receipt with its exact code, category, reason and action', async () => {
    for (const outcome of sandboxOutcomes.filter((candidate) => candidate.value !== SANDBOX_SUCCESS)) {
      const id = await newReceipt();
      const session = await openOnrampSession(deps, id, null);
      await sandboxCheckout(deps, session.sessionId);
      expect(await sandboxFinish(deps, session.sessionId, outcome.value)).toBe(`${BASE_URL}/pay/${id}`);
      const receipt = await receiptOf(id);
      const code = outcome.portalCode as FailureCode;
      const info = failureInfo(code);
      expect(receipt.status, outcome.value).toBe('failed');
      expect(receipt.failure, outcome.value).toMatchObject({ failureCode: code, failureCategory: info.category, failureReason: info.reason, failureAction: info.action, providerErrorCode: outcome.value });
      expect(receipt.failure?.providerRequestId).toMatch(/^req_sbx_/);
      // A card failure, even the provider's own session expiry, leaves the receipt payable (by wallet, or another card).
      expect((await getPortalView(deps, id)).payable, outcome.value).toBe(true);
      expect(toWebhookBody(receipt, Date.now())).toMatchObject({ status: 'failed', previousStatus: 'checkout_initialized', failureCode: code, failureCategory: info.category, providerErrorCode: outcome.value });
    }
  }, 120_000);

  it('an unknown provider code becomes PORTAL_SYS_GENERIC_FAILURE, keeping the provider code', async () => {
    const id = await newReceipt();
    const session = await openOnrampSession(deps, id, null);
    await sandboxFinish(deps, session.sessionId, 'mystery_error');
    expect((await receiptOf(id)).failure).toMatchObject({ failureCode: 'PORTAL_SYS_GENERIC_FAILURE', failureCategory: 'system', providerErrorCode: 'mystery_error' });
  });

  it('after a decline the receipt can still be paid by wallet, or by card in a new session', async () => {
    const id = await newReceipt();
    const first = await openOnrampSession(deps, id, null);
    await sandboxCheckout(deps, first.sessionId);
    await sandboxFinish(deps, first.sessionId, 'card_declined');
    expect((await receiptOf(id)).status).toBe('failed');
    const view = await getPortalView(deps, id);
    expect(view.payable).toBe(true);
    expect(view.failure).toEqual({ code: 'PORTAL_PAY_CARD_DECLINED', reason: 'Declined by the issuer', action: 'Try another card, or pay with crypto.' });
    // The card again: a new session (the declined one is closed).
    const second = await openOnrampSession(deps, id, null);
    expect(second.sessionId).not.toBe(first.sessionId);
    expect((await sandboxCheckout(deps, first.sessionId)).closed).toMatch(/newer session/);
    // A late rejection of the replaced session changes nothing.
    await deps.onrampSandbox!.notify({ sessionId: first.sessionId, kind: 'rejected', providerErrorCode: 'fraud_blocked' });
    expect((await receiptOf(id)).failure?.failureCode).toBe('PORTAL_PAY_CARD_DECLINED');
    // Paid by wallet instead.
    const buyer = await newWallet();
    const quote = await quoteFor(deps, id, 'USDC');
    const tx = await erc20(quote.tokenAddress!, buyer).getFunction('transfer')(quote.payTo, BigInt(quote.amount));
    await tx.wait();
    expect(await verifyPayment(deps, id, tx.hash)).toMatchObject({ outcome: 'paid', status: 'paid' });
  }, 60_000);

  describe('provider webhooks that must change nothing', () => {
    const signed = (body: string, at = Math.floor(Date.now() / 1000), secret = SECRET) => new Headers({ [SANDBOX_SIGNATURE_HEADER]: sandboxSignature(secret, at, body) });
    const rejection = (sessionId: string, id = `evt_forged_${Date.now()}`) =>
      JSON.stringify({ id, type: 'sandbox.session_updated', created: Math.floor(Date.now() / 1000), data: { session: sessionId, kind: 'rejected', source_amount_usd: null, transaction_hash: null, code: 'card_declined', request_id: 'req_x' } });

    it('a forged, altered or stale webhook is refused (invalid_signature)', async () => {
      const id = await newReceipt();
      const session = await openOnrampSession(deps, id, null);
      const body = rejection(session.sessionId);
      await expect(applyOnrampWebhook(deps, 'sandbox', body, signed(body, undefined, 'another-secret-entirely'))).rejects.toMatchObject({ code: 'invalid_signature' });
      await expect(applyOnrampWebhook(deps, 'sandbox', body.replace('card_declined', 'fraud_blocked'), signed(body))).rejects.toMatchObject({ code: 'invalid_signature' });
      await expect(applyOnrampWebhook(deps, 'sandbox', body, signed(body, Math.floor(Date.now() / 1000) - 600))).rejects.toMatchObject({ code: 'invalid_signature' });
      await expect(applyOnrampWebhook(deps, 'sandbox', body, new Headers())).rejects.toMatchObject({ code: 'invalid_signature' });
      // A provider this deployment does not use.
      await expect(applyOnrampWebhook(deps, 'stripe', body, signed(body))).rejects.toMatchObject({ code: 'not_found' });
      expect((await receiptOf(id)).status).toBe('pending');
      // The same body, properly signed, applies.
      expect(await applyOnrampWebhook(deps, 'sandbox', body, signed(body))).toMatchObject({ applied: true, status: 'failed' });
    });

    it('a replayed webhook is applied once', async () => {
      const id = await newReceipt();
      const session = await openOnrampSession(deps, id, null);
      await sandboxCheckout(deps, session.sessionId);
      const created = sent.findLast((webhook) => webhook.body.includes(session.sessionId))!;
      await sandboxFinish(deps, session.sessionId, 'kyc_required');
      const rejected = sent.findLast((webhook) => webhook.body.includes(session.sessionId))!;
      const before = await receiptOf(id);
      // A new session after the failure; then the old events arrive again, signatures still fresh.
      await openOnrampSession(deps, id, null);
      expect(await applyOnrampWebhook(deps, 'sandbox', rejected.body, new Headers(rejected.headers))).toMatchObject({ applied: false });
      expect(await applyOnrampWebhook(deps, 'sandbox', created.body, new Headers(created.headers))).toMatchObject({ applied: false });
      const after = await receiptOf(id);
      expect(after.status).toBe('failed');
      expect(after.statusHistory).toHaveLength(before.statusHistory.length);
    });

    const event = (sessionId: string, kind: string, id: string, code: string | null = null) =>
      JSON.stringify({ id, type: 'sandbox.session_updated', created: Math.floor(Date.now() / 1000), data: { session: sessionId, kind, source_amount_usd: null, transaction_hash: null, code, request_id: 'req_t' } });

    it('events out of order: a late session_created cannot undo the session’s rejection, nor a replay of an earlier event', async () => {
      const id = await newReceipt();
      const session = await openOnrampSession(deps, id, null);
      const created = event(session.sessionId, 'session_created', `evt_a_${id}`);
      expect(await applyOnrampWebhook(deps, 'sandbox', created, signed(created))).toMatchObject({ applied: true, status: 'checkout_initialized' });
      const rejected = event(session.sessionId, 'rejected', `evt_b_${id}`, 'card_declined');
      expect(await applyOnrampWebhook(deps, 'sandbox', rejected, signed(rejected))).toMatchObject({ applied: true, status: 'failed' });
      // The same session, not replaced: the replay and a new, late tracking event are both behind its state.
      expect(await applyOnrampWebhook(deps, 'sandbox', created, signed(created))).toMatchObject({ applied: false });
      const late = event(session.sessionId, 'payment_processing', `evt_c_${id}`);
      expect(await applyOnrampWebhook(deps, 'sandbox', late, signed(late))).toMatchObject({ applied: false, reason: expect.stringContaining('rejected') });
      expect(await receiptOf(id)).toMatchObject({ status: 'failed', failure: { failureCode: 'PORTAL_PAY_CARD_DECLINED' } });
    });

    it('two copies of an event arriving together are applied once', async () => {
      const id = await newReceipt();
      const session = await openOnrampSession(deps, id, null);
      const created = event(session.sessionId, 'session_created', `evt_twice_${id}`);
      const answers = await Promise.all([1, 2, 3].map(() => applyOnrampWebhook(deps, 'sandbox', created, signed(created))));
      expect(answers.filter((answer) => answer.applied)).toHaveLength(1);
      const receipt = await receiptOf(id);
      expect(receipt.statusHistory.filter((change) => change.status === 'checkout_initialized')).toHaveLength(1);
      expect(receipt.onramp?.appliedEvents.filter((applied) => applied === `evt_twice_${id}`)).toHaveLength(1);
    });

    it('an expired receipt is not revived by a late event of its session', async () => {
      const quick = { ...deps, settings: { ...deps.settings, payments: { ...deps.settings.payments, receiptExpiryMs: 1 } } };
      const id = await newReceipt();
      const session = await openOnrampSession(deps, id, null);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await expireReceipts(quick);
      const created = event(session.sessionId, 'session_created', `evt_exp_${id}`);
      expect(await applyOnrampWebhook(quick, 'sandbox', created, signed(created))).toMatchObject({ applied: false, reason: 'the receipt has expired' });
      expect(await receiptOf(id)).toMatchObject({ status: 'failed', failure: { failureCode: 'PORTAL_SESSION_EXPIRED' } });
      expect((await getPortalView(quick, id)).payable).toBe(false);
    });

    it('an event about a session no receipt has is answered, not applied', async () => {
      const body = rejection('sbx_unknown');
      expect(await applyOnrampWebhook(deps, 'sandbox', body, signed(body))).toMatchObject({ applied: false, reason: expect.stringContaining('no receipt') });
    });
  });

  it('two opens at once make one session; while a session is paid for, no second one opens', async () => {
    const id = await newReceipt();
    const [first, second] = await Promise.all([openOnrampSession(deps, id, null), openOnrampSession(deps, id, null)]);
    expect(second.sessionId).toBe(first.sessionId);
    await deps.onrampSandbox!.notify({ sessionId: first.sessionId, kind: 'payment_processing', sourceAmountUsd: 20 });
    expect((await receiptOf(id)).onramp?.state).toBe('processing');
    await expect(openOnrampSession(deps, id, null)).rejects.toMatchObject({ code: 'conflict' });
  });

  it('a delivery whose transaction did not pay the receipt opens no second card charge, and says so', async () => {
    const id = await newReceipt();
    const session = await openOnrampSession(deps, id, null);
    // The provider names a transfer of the quote's token to somewhere else: not a payment of this receipt.
    const elsewhere = await (await erc20(chainInfo.usdc, await newWallet()).getFunction('transfer')(chainInfo.usdc, 1n)).wait();
    await deps.onrampSandbox!.notify({ sessionId: session.sessionId, kind: 'delivered', transactionHash: elsewhere!.hash });
    expect(await receiptOf(id)).toMatchObject({ status: 'pending', onramp: { state: 'delivered' } });
    await expect(openOnrampSession(deps, id, null)).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('did not pay it') });
    expect((await getPortalView(deps, id)).payable).toBe(true);
  });

  it('an opener that stopped half way holds the receipt only until its lock ends', async () => {
    const id = await newReceipt();
    const lock = `onramp-open:${id}:first`;
    await deps.claims.create(lock, { id: lock, owner: `${merchant}:${id}`, createdAt: Date.now() - 120_000, expiresAt: Date.now() - 60_000 });
    expect((await openOnrampSession(deps, id, null)).sessionId).toMatch(/^sbx_/);
    // A lock still held is waited for, then answered 409.
    const other = await newReceipt();
    const held = `onramp-open:${other}:first`;
    await deps.claims.create(held, { id: held, owner: `${merchant}:${other}`, createdAt: Date.now(), expiresAt: Date.now() + 60_000 });
    await expect(openOnrampSession(deps, other, null)).rejects.toMatchObject({ code: 'conflict' });
  }, 30_000);

  it('without a provider the portal offers no card and refuses to open a session', async () => {
    const id = await newReceipt();
    const without = { ...deps, onramp: undefined as OnrampProvider | undefined };
    expect((await getPortalView(without, id)).card).toBeNull();
    await expect(openOnrampSession(without, id, null)).rejects.toThrow(/card payments are not offered/);
  });
});

describe('the sandbox’s card charge', () => {
  it('is the USDC plus 2.9 % and $0.30, to the cent', () => {
    expect(sandboxCharge(18.5)).toBe(19.34);
    expect(sandboxCharge(100)).toBe(103.2);
    expect(sandboxCharge(0.01)).toBe(0.31);
    expect(sandboxCharge(1_000)).toBe(1_029.3);
  });
});
