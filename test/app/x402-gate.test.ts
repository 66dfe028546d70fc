/**
 * The x402 gate against the run's anvil chain: the real TestUSDC (EIP-3009), the protocol's own
 * facilitator in process with a relayer of this file's own (a fresh account, funded here), fresh
 * payers for every case, v2 proofs made by the protocol's client and v1 proofs signed here.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { PaymentRequiredV1Schema, PaymentRequiredV2Schema } from '@x402/core/schemas';
import { createSIWxPayload, encodeSIWxHeader, type CompleteSIWxInfo, type EVMSigner } from '@x402/extensions/sign-in-with-x';
import { privateKeyToAccount } from 'viem/accounts';
import { Contract, ContractFactory, NonceManager, Signature, Wallet, hexlify, randomBytes, toQuantity, verifyTypedData, type BaseWallet, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import ownedWalletArtifact from '../../contracts/artifacts/OwnedWallet.json';
import type { AppDeps } from '../../shared/app/deps';
import { ANSWER_LEASE_MS, SETTLEMENT_LEASE_MS, rememberAnswer, requirePayment, storedAnswerFor, type GateOutcome, type GateReply, type PaidResource } from '../../shared/app/x402/gate';
import { signInWithXChallenge, verifySignInWithX } from '../../shared/app/x402/siwx';
import { x402Order } from '../../shared/app/x402/orders';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { InventoryUpsertInput } from '../../shared/domain/inventory';
import { newMerchant } from '../../shared/domain/merchant';
import { slugClaimId } from '../../shared/domain/shop';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { httpSettler } from '../../shared/adapters/x402/http-settler';
import { inProcessSettler } from '../../shared/adapters/x402/in-process-settler';
import { x402Protocol } from '../../shared/adapters/x402/protocol';
import { memoryDeps } from '../../shared/composition';
import { DomainError } from '../../shared/domain/errors';
import { paymentProofClaimId, type PaymentPayload } from '../../shared/domain/x402';
import type { PaymentSettler } from '../../shared/ports/payment-settler';
import { transferWithAuthorization } from '../support/eip3009';
import { fundedAccount, protocolProof, x402TestChain } from '../support/x402';

const local = inject('chain');
const usdcAddress = local.usdc.toLowerCase();
const BASE_URL = 'http://localhost:7071';
const ORDERS = `${BASE_URL}/api/x402/orders`;
const PRICE = 1_250_000n;

let provider: JsonRpcProvider;
let funder: NonceManager;
let usdc: Contract;
let settler: PaymentSettler;
const protocol = x402Protocol({ rpcUrl: local.rpcUrl, chainId: local.chainId });

beforeAll(async () => {
  ({ provider, funder, usdc, settler } = await x402TestChain());
});
afterAll(() => provider.destroy());

const depsWith = (overrides: Partial<AppDeps> = {}): AppDeps => {
  const base = memoryDeps();
  return memoryDeps({
    settler,
    x402: protocol,
    settings: { ...base.settings, baseUrl: BASE_URL, siweDomain: 'localhost:7071', chainId: local.chainId, tokens: [{ symbol: 'USDC', address: usdcAddress, decimals: 6 }] },
    ...overrides,
  });
};

const balanceOf = async (address: string): Promise<bigint> => usdc.getFunction('balanceOf').staticCall(address);
const authorizationUsed = async (from: string, nonce: string): Promise<boolean> => usdc.getFunction('authorizationState').staticCall(from, nonce);

/** A new payer holding `funds` USDC (it never needs ETH: the relayer pays the gas). */
const newPayer = async (funds = 5_000_000n) => {
  const payer = Wallet.createRandom();
  if (funds > 0n) await (await usdc.getFunction('mint').send(payer.address, funds)).wait();
  return payer;
};

const resourceFor = (payTo = Wallet.createRandom().address.toLowerCase(), amount = PRICE, resource = ORDERS): PaidResource => ({ resource, description: 'An order', payTo, amount });

const headers = (values: Record<string, string> = {}) => new Headers(values);

const challenged = (outcome: GateOutcome) => {
  if (outcome.kind !== 'challenge') throw new Error(`expected a challenge, got ${outcome.kind}`);
  return outcome.reply;
};

/** The v2 challenge of a resource, as a client reads it from the header. */
const challengeOf = async (deps: AppDeps, resource: PaidResource) =>
  decodePaymentRequiredHeader(challenged(await requirePayment(deps, headers(), resource)).headers['PAYMENT-REQUIRED']!);

/** A v2 proof made by the protocol's own client for the challenge. */
const clientProof = async (payer: BaseWallet, deps: AppDeps, resource: PaidResource): Promise<PaymentPayload> => protocolProof(payer.privateKey, await challengeOf(deps, resource));

const v2Header = (payload: unknown) => ({ 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload as never) });
const v1Header = (payload: unknown) => ({ 'X-PAYMENT': Buffer.from(JSON.stringify(payload)).toString('base64') });


interface Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

/** An EIP-3009 authorization signed here (ethers), by `signer` (the payer unless a forger is named). */
const signed = async (payer: BaseWallet, terms: Partial<Authorization> & { to: string }, signer: BaseWallet = payer) => {
  const now = Math.floor(Date.now() / 1000);
  const authorization: Authorization = { from: payer.address, value: PRICE.toString(), validAfter: '0', validBefore: String(now + 120), nonce: hexlify(randomBytes(32)), ...terms };
  const domain = { name: 'USD Coin', version: '2', chainId: local.chainId, verifyingContract: local.usdc };
  const signature = await signer.signTypedData(domain, { TransferWithAuthorization: transferWithAuthorization }, authorization);
  return { authorization, signature };
};

/** A v1 proof (`X-PAYMENT`): the envelope the v1 protocol defines, around an authorization signed here. */
const v1Proof = async (payer: BaseWallet, terms: Partial<Authorization> & { to: string }, network = `eip155:${local.chainId}`) => ({
  x402Version: 1,
  scheme: 'exact',
  network,
  payload: await signed(payer, terms),
});

/** A use case behind the gate: the work's answer, remembered for replays. */
const serve = async (deps: AppDeps, request: Headers, resource: PaidResource, body: unknown = { ok: true }): Promise<GateReply> => {
  const gate = await requirePayment(deps, request, resource);
  if (gate.kind !== 'paid') return gate.reply;
  const reply = { status: 200, body: { ...(body as object), transaction: gate.transaction }, headers: gate.responseHeaders };
  await rememberAnswer(deps, gate.proofKey, reply);
  return reply;
};

/** A refusal: 402 with the reason, and nothing moved on chain nor recorded. */
const expectRefused = async (deps: AppDeps, request: Headers, resource: PaidResource, reason: string, payer: { address: string; funds: bigint }, nonce: string) => {
  const reply = challenged(await requirePayment(deps, request, resource));
  expect(reply.status).toBe(402);
  expect(reply.body).toMatchObject({ x402Version: 1, error: reason });
  expect(decodePaymentRequiredHeader(reply.headers['PAYMENT-REQUIRED']!)).toMatchObject({ x402Version: 2, error: reason });
  expect(await balanceOf(payer.address)).toBe(payer.funds);
  expect(await balanceOf(resource.payTo)).toBe(0n);
  expect(await authorizationUsed(payer.address, nonce)).toBe(false);
  const id = paymentProofClaimId(local.chainId, usdcAddress, payer.address, nonce);
  return (await deps.claims.get(id, id))?.value;
};

describe('the challenge', () => {
  it('is a v1 PaymentRequired body and a v2 PAYMENT-REQUIRED header, both valid by the protocol schemas, with the token read from its contract', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const reply = challenged(await requirePayment(deps, headers(), resource));
    expect(reply.status).toBe(402);
    expect(PaymentRequiredV1Schema.safeParse(reply.body).success).toBe(true);
    expect(reply.body).toEqual({
      x402Version: 1,
      error: 'payment_required',
      accepts: [
        {
          scheme: 'exact',
          // 31337 has no v1 name: its CAIP-2 id.
          network: `eip155:${local.chainId}`,
          maxAmountRequired: '1250000',
          resource: ORDERS,
          description: 'An order',
          mimeType: 'application/json',
          payTo: resource.payTo,
          maxTimeoutSeconds: 120,
          asset: usdcAddress,
          extra: { name: 'USD Coin', version: '2' },
        },
      ],
    });
    const v2 = decodePaymentRequiredHeader(reply.headers['PAYMENT-REQUIRED']!);
    expect(PaymentRequiredV2Schema.safeParse(v2).success).toBe(true);
    expect(v2).toEqual({
      x402Version: 2,
      error: 'payment_required',
      resource: { url: ORDERS, description: 'An order', mimeType: 'application/json' },
      accepts: [{ scheme: 'exact', network: `eip155:${local.chainId}`, amount: '1250000', asset: usdcAddress, payTo: resource.payTo, maxTimeoutSeconds: 120, extra: { name: 'USD Coin', version: '2' } }],
    });
  });

  it('names the chain by its v1 name where v1 has one (base, base-sepolia)', async () => {
    expect(await protocol.v1Network(8453)).toBe('base');
    expect(await protocol.v1Network(84532)).toBe('base-sepolia');
    expect(await protocol.v1Network(31337)).toBeUndefined();
  });

  it('offers sign-in-with-x when asked: a nonce, the sign-in domain, the resource, the chain', async () => {
    const deps = depsWith();
    const v2 = await challengeOf(deps, { ...resourceFor(), extensions: { signInWithX: true } });
    expect(v2.extensions?.['sign-in-with-x']).toMatchObject({
      info: { domain: 'localhost:7071', uri: ORDERS, version: '1', nonce: expect.stringMatching(/^[a-z0-9]{57}$/), issuedAt: expect.any(String), expirationTime: expect.any(String), statement: expect.any(String) },
      supportedChains: [{ chainId: `eip155:${local.chainId}`, type: 'eip191' }],
      schema: { type: 'object' },
    });
    expect((await challengeOf(deps, resourceFor())).extensions).toBeUndefined();
  });
});

describe('a paid call', () => {
  it('v2 (the protocol client): settled, the USDC moved from the payer to payTo, PAYMENT-RESPONSE with the settlement; a replay gets the same answer and pays nothing', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const proof = await clientProof(payer, deps, resource);
    const outcome = await requirePayment(deps, headers(v2Header(proof)), resource);
    if (outcome.kind !== 'paid') throw new Error(`not paid: ${JSON.stringify(outcome)}`);
    expect(outcome).toMatchObject({ payer: payer.address.toLowerCase(), network: `eip155:${local.chainId}`, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await balanceOf(payer.address)).toBe(5_000_000n - PRICE);
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
    const mined = await provider.getTransactionReceipt(outcome.transaction);
    expect(mined?.status).toBe(1);
    expect(decodePaymentResponseHeader(outcome.responseHeaders['PAYMENT-RESPONSE']!)).toMatchObject({ success: true, transaction: outcome.transaction, network: `eip155:${local.chainId}`, payer: payer.address });

    const answer = { status: 200, body: { ok: true, receiptId: 'R-1' }, headers: outcome.responseHeaders };
    await rememberAnswer(deps, outcome.proofKey, answer);
    const replay = await requirePayment(deps, headers(v2Header(proof)), resource);
    expect(replay).toEqual({ kind: 'replay', reply: answer });
    expect(await balanceOf(payer.address)).toBe(5_000_000n - PRICE);
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
  });

  it('v1 (X-PAYMENT, signed here): settled, X-PAYMENT-RESPONSE with the settlement', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const outcome = await requirePayment(deps, headers(v1Header(await v1Proof(payer, { to: resource.payTo }))), resource);
    if (outcome.kind !== 'paid') throw new Error(`not paid: ${JSON.stringify(outcome)}`);
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
    expect(outcome.responseHeaders['PAYMENT-RESPONSE']).toBeUndefined();
    expect(decodePaymentResponseHeader(outcome.responseHeaders['X-PAYMENT-RESPONSE']!)).toMatchObject({ success: true, transaction: outcome.transaction, network: `eip155:${local.chainId}` });
  });

  it('is settled as it was checked: keys beside the authorization (a Permit2 one, say) never reach the facilitator', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const proof = await v1Proof(payer, { to: resource.payTo });
    const steered = { ...proof, payload: { ...proof.payload, permit2Authorization: { from: payer.address, spender: Wallet.createRandom().address } } };
    const outcome = await requirePayment(deps, headers(v1Header(steered)), resource);
    expect(outcome.kind).toBe('paid');
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
  });

  it('the same proof sent 20 times at once settles once: one transfer; the others get the 200 again or 409 while it runs, never a 500', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const proof = v2Header(await clientProof(payer, deps, resource));
    const fromBlock = await provider.getBlockNumber();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        serve(deps, headers(proof), resource, { run: n }).then(
          (reply) => reply,
          (error: unknown) => ({ status: error instanceof DomainError && error.code === 'conflict' ? 409 : 500, body: String(error), headers: {} }),
        ),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 200 && status !== 409)).toEqual([]);
    const bodies = new Set(answers.filter((answer) => answer.status === 200).map((answer) => JSON.stringify(answer.body)));
    // One run did the work; every 200 is its answer.
    expect(bodies.size).toBe(1);
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
    expect(await balanceOf(payer.address)).toBe(5_000_000n - PRICE);
    const transfers = await usdc.queryFilter(usdc.filters.Transfer!(payer.address), fromBlock);
    expect(transfers).toHaveLength(1);
    // Afterwards, a replay answers that same 200.
    const again = await serve(deps, headers(proof), resource, { run: 'late' });
    expect(again.status).toBe(200);
    expect(JSON.stringify(again.body)).toBe([...bodies][0]);
  });
});

describe('the same proof, checked while another request settles it', () => {
  /**
   * A facilitator whose second verification is asked only once the first request has settled the
   * proof (the nonce is used by then): it refuses it, or fails to simulate it and throws.
   */
  const lateVerifier = (late: 'refuses' | 'throws') => {
    let calls = 0;
    let settled!: () => void;
    const done = new Promise<void>((resolve) => (settled = resolve));
    const wrapped: PaymentSettler = {
      verify: async (payload, requirements) => {
        if (++calls === 1) return settler.verify(payload, requirements);
        await done;
        if (late === 'throws') throw new Error('execution reverted: the simulation failed');
        return settler.verify(payload, requirements);
      },
      settle: async (payload, requirements) => {
        const result = await settler.settle(payload, requirements);
        settled();
        return result;
      },
    };
    return wrapped;
  };

  it.each(['refuses', 'throws'] as const)('a facilitator that %s the late one: it gets the payment’s answer or 409, never a 402 or a 503', async (late) => {
    const deps = depsWith({ settler: lateVerifier(late) });
    const resource = resourceFor();
    const payer = await newPayer();
    const proof = v2Header(await clientProof(payer, deps, resource));
    const [first, second] = await Promise.all(
      [0, 1].map((run) =>
        serve(deps, headers(proof), resource, { run }).then(
          (reply) => reply.status,
          (error: unknown) => (error instanceof DomainError && error.code === 'conflict' ? 409 : 503),
        ),
      ),
    );
    expect(first).toBe(200);
    expect([200, 409]).toContain(second);
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
  });
});

describe('a settled proof without an answer', () => {
  it('answers 409 while the run it let through may still answer, then lets a replay run the work again under the same key, charging nothing more', async () => {
    let offset = 0;
    const deps = depsWith({ clock: { now: () => Date.now() + offset } });
    const resource = resourceFor();
    const payer = await newPayer();
    const proof = headers(v2Header(await clientProof(payer, deps, resource)));
    const first = await requirePayment(deps, proof, resource);
    if (first.kind !== 'paid') throw new Error(`not paid: ${first.kind}`);
    // The run crashed before rememberAnswer.
    await expect(requirePayment(deps, proof, resource)).rejects.toMatchObject({ code: 'conflict' });
    offset = ANSWER_LEASE_MS + 1_000;
    const again = await requirePayment(deps, proof, resource);
    expect(again).toEqual(first);
    await expect(requirePayment(deps, proof, resource)).rejects.toMatchObject({ code: 'conflict' });
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
    expect(await balanceOf(payer.address)).toBe(5_000_000n - PRICE);
  });
});

describe('a replay of a settled proof asks what it paid for', () => {
  it('the same signature re-enveloped for a higher amount, sent to a dearer resource or to another URL is refused, and not let through again', async () => {
    let offset = 0;
    const deps = depsWith({ clock: { now: () => Date.now() + offset } });
    const resource = resourceFor();
    const payer = await newPayer();
    const v1 = await v1Proof(payer, { to: resource.payTo });
    const first = await requirePayment(deps, headers(v1Header(v1)), resource);
    if (first.kind !== 'paid') throw new Error(`not paid: ${first.kind}`);
    // The run crashed before rememberAnswer, and its lease has passed.
    offset = ANSWER_LEASE_MS + 1_000;
    const dearer = { ...resource, amount: PRICE * 10n };
    const raised = { ...v1, payload: { ...v1.payload, authorization: { ...v1.payload.authorization, value: String(PRICE * 10n) } } };
    expect(challenged(await requirePayment(deps, headers(v1Header(raised)), dearer)).body).toMatchObject({ error: 'amount_mismatch' });
    // The very proof, at a dearer price: its authorization pays less than asked.
    expect(challenged(await requirePayment(deps, headers(v1Header(v1)), dearer)).body).toMatchObject({ error: 'amount_mismatch' });
    // v2: the envelope and the authorization both raised.
    const v2 = {
      x402Version: 2,
      resource: { url: ORDERS, description: 'An order', mimeType: 'application/json' },
      accepted: { scheme: 'exact', network: `eip155:${local.chainId}`, amount: String(PRICE * 10n), asset: usdcAddress, payTo: resource.payTo, maxTimeoutSeconds: 120, extra: { name: 'USD Coin', version: '2' } },
      payload: raised.payload,
    };
    expect(challenged(await requirePayment(deps, headers(v2Header(v2)), dearer)).body).toMatchObject({ error: 'amount_mismatch' });
    // The same terms for another resource.
    const elsewhere = { ...resource, resource: `${BASE_URL}/api/x402/subscribe` };
    expect(challenged(await requirePayment(deps, headers(v1Header(v1)), elsewhere)).body).toMatchObject({ error: 'resource_mismatch' });
    // A validity window changed around the signature, at the same price.
    const stretched = { ...v1, payload: { ...v1.payload, authorization: { ...v1.payload.authorization, validAfter: '1' } } };
    expect(challenged(await requirePayment(deps, headers(v1Header(stretched)), resource)).body).toMatchObject({ error: 'invalid_payment' });
    // The very proof for what it paid is still let through, under its key.
    expect(await requirePayment(deps, headers(v1Header(v1)), resource)).toEqual(first);
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
  });
});

describe('a resent proof of an answered order', () => {
  it('gets its answer again before the order is priced or its stock checked: the last units sold to it are no 409', async () => {
    const deps = depsWith();
    const merchant = Wallet.createRandom().address.toLowerCase();
    const split = Wallet.createRandom().address.toLowerCase();
    const now = Date.now();
    await deps.merchants.upsert(merchant, {
      ...newMerchant(merchant, now),
      split: { address: split, recipients: [{ address: merchant, bps: 10_000, role: 'merchant' }], platformFeeBps: 0, partnerFeeBps: 0, txHash: `0x${'1'.repeat(64)}`, chainId: local.chainId, deployedAt: now },
    });
    const slug = `last-${Date.now()}`;
    await deps.claims.create(slugClaimId(slug), { id: slugClaimId(slug), owner: merchant, createdAt: now });
    await upsertInventoryItem(deps, merchant, InventoryUpsertInput.parse({ sku: 'LAST', name: 'The last one', priceUsd: 1.25, stockQty: 1 }));
    const body = { shopSlug: slug, items: [{ sku: 'LAST', qty: 1 }] };
    const payer = await newPayer();
    const resource = resourceFor(split);
    expect(await storedAnswerFor(deps, headers())).toBeUndefined();
    const proof = headers(v1Header(await v1Proof(payer, { to: resource.payTo })));
    expect(await storedAnswerFor(deps, proof)).toBeUndefined();
    const paid = await x402Order(deps, proof, body);
    expect(paid.status).toBe(200);
    expect(await balanceOf(split)).toBe(PRICE);
    expect(await storedAnswerFor(deps, proof)).toEqual(paid);
    // The paid change signed the receipt's proof: the settlement, the split, the USDC and its amount.
    const { receiptId, transactionHash } = (paid.body as { receipt: { receiptId: string; transactionHash: string } }).receipt;
    const signed = (await deps.receipts.get(merchant, receiptId))!.value.proof!;
    expect(verifyTypedData(signed.domain, signed.types, signed.message, signed.signature)).toBe(await deps.receiptSigner.address());
    expect(signed.message).toMatchObject({ receiptId, transactionHash: transactionHash.toLowerCase(), token: 'USDC', amount: PRICE.toString(), payTo: split, payer: payer.address.toLowerCase() });
    // The stock is gone, to this very order: its proof again is answered as before.
    expect(await x402Order(deps, proof, body)).toEqual(paid);
    // A new order finds none.
    await expect(x402Order(deps, headers(), body)).rejects.toMatchObject({ code: 'insufficient_stock' });
    expect(await balanceOf(split)).toBe(PRICE);
  });
});

describe('a settlement whose facilitator throws', () => {
  it('answers 503 and lets the same proof come again (the token spends an authorization once at most)', async () => {
    const broken: PaymentSettler = {
      verify: (payload, requirements) => settler.verify(payload, requirements),
      settle: async () => {
        throw new Error('socket hang up');
      },
    };
    const deps = depsWith({ settler: broken });
    const resource = resourceFor();
    const payer = await newPayer();
    const payload = await clientProof(payer, deps, resource);
    const proof = headers(v2Header(payload));
    await expect(requirePayment(deps, proof, resource)).rejects.toMatchObject({ name: 'DependencyUnavailableError' });
    const { nonce } = (payload.payload as { authorization: Authorization }).authorization;
    const id = paymentProofClaimId(local.chainId, usdcAddress, payer.address, nonce);
    expect(await deps.claims.get(id, id)).toBeUndefined();
    const outcome = await requirePayment({ ...deps, settler }, proof, resource);
    expect(outcome.kind).toBe('paid');
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
  });
});

describe('a settlement left pending, or whose settler threw after sending', () => {
  /** A settler that settles (or not), then answers `settlement_pending` with the transaction it sent. */
  const pendingSettler = (send: boolean): PaymentSettler & { sent: string[] } => {
    const sent: string[] = [];
    return {
      sent,
      verify: (payload, requirements) => settler.verify(payload, requirements),
      settle: async (payload, requirements) => {
        const transaction = send ? (await settler.settle(payload, requirements)).transaction : `0x${'ab'.repeat(32)}`;
        sent.push(transaction);
        return { success: false, errorReason: 'settlement_pending', transaction, network: requirements.network };
      },
    };
  };

  it('mined meanwhile: 409 while its lease runs, then the chain is asked and the proof is paid with the kept transaction, charged once', async () => {
    let offset = 0;
    const pending = pendingSettler(true);
    const deps = depsWith({ settler: pending, clock: { now: () => Date.now() + offset } });
    const resource = resourceFor();
    const payer = await newPayer();
    const proof = headers(v2Header(await clientProof(payer, deps, resource)));
    await expect(requirePayment(deps, proof, resource)).rejects.toMatchObject({ name: 'DependencyUnavailableError' });
    await expect(requirePayment(deps, proof, resource)).rejects.toMatchObject({ code: 'conflict' });
    offset = SETTLEMENT_LEASE_MS + 1_000;
    const outcome = await requirePayment({ ...deps, settler }, proof, resource);
    if (outcome.kind !== 'paid') throw new Error(`not paid: ${JSON.stringify(outcome)}`);
    expect(outcome.transaction).toBe(pending.sent[0]!.toLowerCase());
    expect(decodePaymentResponseHeader(outcome.responseHeaders['PAYMENT-RESPONSE']!)).toMatchObject({ success: true, transaction: outcome.transaction });
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
    expect(await balanceOf(payer.address)).toBe(5_000_000n - PRICE);
    // Answered, it replays as any other.
    const answer = { status: 200, body: { ok: true }, headers: outcome.responseHeaders };
    await rememberAnswer(deps, outcome.proofKey, answer);
    expect(await requirePayment(deps, proof, resource)).toEqual({ kind: 'replay', reply: answer });
  });

  it('never sent: once its lease has passed, the proof is settled again while its authorization is valid', async () => {
    let offset = 0;
    const deps = depsWith({ settler: pendingSettler(false), clock: { now: () => Date.now() + offset } });
    const resource = resourceFor();
    const payer = await newPayer();
    const v1 = await v1Proof(payer, { to: resource.payTo, validBefore: String(Math.floor(Date.now() / 1000) + 400) });
    await expect(requirePayment(deps, headers(v1Header(v1)), resource)).rejects.toMatchObject({ name: 'DependencyUnavailableError' });
    offset = SETTLEMENT_LEASE_MS + 1_000;
    const outcome = await requirePayment({ ...deps, settler }, headers(v1Header(v1)), resource);
    expect(outcome.kind).toBe('paid');
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
  });

  it('never sent and expired: released, expired_authorization', async () => {
    let offset = 0;
    const deps = depsWith({ settler: pendingSettler(false), clock: { now: () => Date.now() + offset } });
    const resource = resourceFor();
    const payer = await newPayer();
    const v1 = await v1Proof(payer, { to: resource.payTo });
    await expect(requirePayment(deps, headers(v1Header(v1)), resource)).rejects.toMatchObject({ name: 'DependencyUnavailableError' });
    offset = 10 * 60_000;
    expect(challenged(await requirePayment({ ...deps, settler }, headers(v1Header(v1)), resource)).body).toMatchObject({ error: 'expired_authorization' });
    const id = paymentProofClaimId(local.chainId, usdcAddress, payer.address, v1.payload.authorization.nonce);
    expect(await deps.claims.get(id, id)).toBeUndefined();
    expect(await balanceOf(resource.payTo)).toBe(0n);
  });

  it('a settler that throws after its transaction went through: the chain says it was used, and the proof is paid by that transaction', async () => {
    const sent: string[] = [];
    const throwing: PaymentSettler = {
      verify: (payload, requirements) => settler.verify(payload, requirements),
      settle: async (payload, requirements) => {
        sent.push((await settler.settle(payload, requirements)).transaction);
        throw new Error('socket hang up');
      },
    };
    const deps = depsWith({ settler: throwing });
    const resource = resourceFor();
    const payer = await newPayer();
    const proof = headers(v2Header(await clientProof(payer, deps, resource)));
    const outcome = await requirePayment(deps, proof, resource);
    if (outcome.kind !== 'paid') throw new Error(`not paid: ${JSON.stringify(outcome)}`);
    expect(outcome.transaction).toBe(sent[0]!.toLowerCase());
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
    // Its run crashed before answering: a resend within the lease waits, as for any settled proof.
    await expect(requirePayment(deps, proof, resource)).rejects.toMatchObject({ code: 'conflict' });
  });
});

describe('a refused proof answers 402 with its reason, and nothing moves', () => {
  it('no proof: payment_required', async () => {
    expect(challenged(await requirePayment(depsWith(), headers(), resourceFor())).body).toMatchObject({ error: 'payment_required' });
  });

  it('a malformed header, or a v1 proof in the v2 header: invalid_payment_header', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const v1 = await v1Proof(payer, { to: resource.payTo });
    for (const request of <Record<string, string>[]>[{ 'PAYMENT-SIGNATURE': '%%%' }, { 'X-PAYMENT': Buffer.from('{"x402Version":1}').toString('base64') }, { 'PAYMENT-SIGNATURE': v1Header(v1)['X-PAYMENT'] }]) {
      await expectRefused(deps, headers(request), resource, 'invalid_payment_header', { address: payer.address, funds: 5_000_000n }, v1.payload.authorization.nonce);
    }
  });

  it('a scheme payload that is no EIP-3009 authorization: invalid_payment', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const proof = await clientProof(payer, deps, resource);
    const nonce = (proof.payload as { authorization: Authorization }).authorization.nonce;
    await expectRefused(deps, headers(v2Header({ ...proof, payload: { signature: (proof.payload as { signature: string }).signature } })), resource, 'invalid_payment', { address: payer.address, funds: 5_000_000n }, nonce);
  });

  it('a proof for another resource: resource_mismatch', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const proof = await clientProof(payer, deps, { ...resource, resource: `${BASE_URL}/api/x402/subscribe` });
    const nonce = (proof.payload as { authorization: Authorization }).authorization.nonce;
    const record = await expectRefused(deps, headers(v2Header(proof)), resource, 'resource_mismatch', { address: payer.address, funds: 5_000_000n }, nonce);
    expect(record).toBeUndefined();
  });

  it('a proof for another amount (in the envelope, or only in the signed authorization): amount_mismatch', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const cheaper = await clientProof(payer, deps, { ...resource, amount: PRICE - 1n });
    const nonce = (cheaper.payload as { authorization: Authorization }).authorization.nonce;
    expect(await expectRefused(deps, headers(v2Header(cheaper)), resource, 'amount_mismatch', { address: payer.address, funds: 5_000_000n }, nonce)).toBeUndefined();
    const v1 = await v1Proof(payer, { to: resource.payTo, value: String(PRICE + 1n) });
    expect(await expectRefused(deps, headers(v1Header(v1)), resource, 'amount_mismatch', { address: payer.address, funds: 5_000_000n }, v1.payload.authorization.nonce)).toBeUndefined();
  });

  it('a proof paying someone else: recipient_mismatch', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const elsewhere = await clientProof(payer, deps, { ...resource, payTo: Wallet.createRandom().address.toLowerCase() });
    const nonce = (elsewhere.payload as { authorization: Authorization }).authorization.nonce;
    expect(await expectRefused(deps, headers(v2Header(elsewhere)), resource, 'recipient_mismatch', { address: payer.address, funds: 5_000_000n }, nonce)).toBeUndefined();
    const v1 = await v1Proof(payer, { to: Wallet.createRandom().address });
    expect(await expectRefused(deps, headers(v1Header(v1)), resource, 'recipient_mismatch', { address: payer.address, funds: 5_000_000n }, v1.payload.authorization.nonce)).toBeUndefined();
  });

  it('a proof on another network or in another token: network_mismatch, asset_mismatch; another scheme: unsupported_scheme', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const proof = await clientProof(payer, deps, resource);
    const nonce = (proof.payload as { authorization: Authorization }).authorization.nonce;
    const funds = { address: payer.address, funds: 5_000_000n };
    await expectRefused(deps, headers(v2Header({ ...proof, accepted: { ...proof.accepted, network: 'eip155:8453' } })), resource, 'network_mismatch', funds, nonce);
    await expectRefused(deps, headers(v2Header({ ...proof, accepted: { ...proof.accepted, asset: local.usdt } })), resource, 'asset_mismatch', funds, nonce);
    await expectRefused(deps, headers(v2Header({ ...proof, accepted: { ...proof.accepted, scheme: 'upto' } })), resource, 'unsupported_scheme', funds, nonce);
    const v1 = await v1Proof(payer, { to: resource.payTo }, 'base');
    await expectRefused(deps, headers(v1Header(v1)), resource, 'network_mismatch', funds, v1.payload.authorization.nonce);
  });

  it('an expired authorization, or one not valid yet: expired_authorization, authorization_not_yet_valid', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const now = Math.floor(Date.now() / 1000);
    const funds = { address: payer.address, funds: 5_000_000n };
    const expired = await v1Proof(payer, { to: resource.payTo, validBefore: String(now - 1) });
    expect(await expectRefused(deps, headers(v1Header(expired)), resource, 'expired_authorization', funds, expired.payload.authorization.nonce)).toBeUndefined();
    const closing = await v1Proof(payer, { to: resource.payTo, validBefore: String(now + 2) });
    await expectRefused(deps, headers(v1Header(closing)), resource, 'expired_authorization', funds, closing.payload.authorization.nonce);
    const early = await v1Proof(payer, { to: resource.payTo, validAfter: String(now + 600) });
    expect(await expectRefused(deps, headers(v1Header(early)), resource, 'authorization_not_yet_valid', funds, early.payload.authorization.nonce)).toBeUndefined();
  });

  it('an authorization valid for far longer than asked: invalid_payment', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const now = Math.floor(Date.now() / 1000);
    const funds = { address: payer.address, funds: 5_000_000n };
    const forever = await v1Proof(payer, { to: resource.payTo, validBefore: (2n ** 256n - 1n).toString() });
    expect(await expectRefused(deps, headers(v1Header(forever)), resource, 'invalid_payment', funds, forever.payload.authorization.nonce)).toBeUndefined();
    const tomorrow = await v1Proof(payer, { to: resource.payTo, validBefore: String(now + 24 * 3600) });
    expect(await expectRefused(deps, headers(v1Header(tomorrow)), resource, 'invalid_payment', funds, tomorrow.payload.authorization.nonce)).toBeUndefined();
    // Within the asked timeout and some slack for clocks: settled.
    const generous = await v1Proof(payer, { to: resource.payTo, validBefore: String(now + 120 + 300) });
    expect((await requirePayment(deps, headers(v1Header(generous)), resource)).kind).toBe('paid');
  });

  it('a signature not the payer’s: invalid_signature', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const forged = { x402Version: 1, scheme: 'exact', network: `eip155:${local.chainId}`, payload: await signed(payer, { to: resource.payTo }, Wallet.createRandom()) };
    expect(await expectRefused(deps, headers(v1Header(forged)), resource, 'invalid_signature', { address: payer.address, funds: 5_000_000n }, forged.payload.authorization.nonce)).toBeUndefined();
    // The client's own proof with its signature changed by one byte.
    const proof = await clientProof(payer, deps, resource);
    const { signature, authorization } = proof.payload as { signature: string; authorization: Authorization };
    const flipped = `${signature.slice(0, 10)}${signature[10] === '0' ? '1' : '0'}${signature.slice(11)}`;
    await expectRefused(deps, headers(v2Header({ ...proof, payload: { authorization, signature: flipped } })), resource, 'invalid_signature', { address: payer.address, funds: 5_000_000n }, authorization.nonce);
  });

  it('a payer without the balance: insufficient_funds', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer(PRICE - 1n);
    const proof = await clientProof(payer, deps, resource);
    const nonce = (proof.payload as { authorization: Authorization }).authorization.nonce;
    expect(await expectRefused(deps, headers(v2Header(proof)), resource, 'insufficient_funds', { address: payer.address, funds: PRICE - 1n }, nonce)).toBeUndefined();
  });

  it('an authorization already used on chain: nonce_used', async () => {
    const deps = depsWith();
    const resource = resourceFor();
    const payer = await newPayer();
    const v1 = await v1Proof(payer, { to: resource.payTo });
    const { authorization, signature } = v1.payload;
    // Someone submits it to the token directly.
    const { v, r, s } = Signature.from(signature);
    const { from, to, value, validAfter, validBefore, nonce } = authorization;
    await (await usdc.getFunction('transferWithAuthorization').send(from, to, value, validAfter, validBefore, nonce, v, r, s)).wait();
    const reply = challenged(await requirePayment(deps, headers(v1Header(v1)), resource));
    expect(reply.body).toMatchObject({ error: 'nonce_used' });
    // Paid once, by that transaction; nothing more.
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
  });

  it('a reused nonce of a proof that never settled: nonce_used, for that proof and any other with its nonce', async () => {
    const resource = resourceFor();
    const payer = await newPayer();
    await provider.send('anvil_setBalance', [payer.address, toQuantity(10n ** 18n)]);
    // The payer moves its USDC away between the check and the settlement.
    const draining: PaymentSettler = {
      verify: (payload, requirements) => settler.verify(payload, requirements),
      settle: async (payload, requirements) => {
        const own = new Contract(local.usdc, testUsdcArtifact.abi, payer.connect(provider));
        await (await own.getFunction('transfer').send(Wallet.createRandom().address, await balanceOf(payer.address))).wait();
        return settler.settle(payload, requirements);
      },
    };
    const deps = depsWith({ settler: draining });
    const v1 = await v1Proof(payer, { to: resource.payTo });
    const first = challenged(await requirePayment(deps, headers(v1Header(v1)), resource));
    expect(first.status).toBe(402);
    expect((first.body as { error: string }).error).not.toBe('payment_required');
    const id = paymentProofClaimId(local.chainId, usdcAddress, payer.address, v1.payload.authorization.nonce);
    expect((await deps.claims.get(id, id))?.value).toMatchObject({ state: 'failed', owner: ORDERS });

    // Able to pay again, the same proof and another with the same nonce are still refused.
    const healthy = depsWith({ claims: deps.claims });
    await (await usdc.getFunction('mint').send(payer.address, 5_000_000n)).wait();
    const funds = { address: payer.address, funds: 5_000_000n };
    expect(await expectRefused(healthy, headers(v1Header(v1)), resource, 'nonce_used', funds, v1.payload.authorization.nonce)).toMatchObject({ state: 'failed' });
    const sameNonce = await v1Proof(payer, { to: resource.payTo, nonce: v1.payload.authorization.nonce, validBefore: String(Math.floor(Date.now() / 1000) + 100) });
    await expectRefused(healthy, headers(v1Header(sameNonce)), resource, 'nonce_used', funds, v1.payload.authorization.nonce);
  });
});

describe('the relayer, when a send of its answers as if it never went', () => {
  /** A JSON-RPC proxy to the chain whose first eth_sendRawTransaction is sent on, and answered with `lie`. */
  const lyingNode = async (lie: string) => {
    let lied = false;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const forwarded = await fetch(local.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const answer = await forwarded.text();
        const call = JSON.parse(body) as { id: unknown; method?: string };
        if (call.method === 'eth_sendRawTransaction' && !lied) {
          lied = true;
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32000, message: lie } }));
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end(answer);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  };

  for (const lie of ['already known', 'nonce too low']) {
    it(`'${lie}' for its own transaction: that transaction is the settlement, no second one is sent`, async () => {
      const node = await lyingNode(lie);
      try {
        const relayer = await fundedAccount(provider);
        const lied = inProcessSettler({ rpcUrl: node.url, chainId: local.chainId, relayerPrivateKey: relayer.privateKey });
        const deps = depsWith();
        const resource = resourceFor();
        const payer = await newPayer();
        const proof = await clientProof(payer, deps, resource);
        const fromBlock = await provider.getBlockNumber();
        // Asked directly: its answer is the settlement's own, not what the gate makes of it from the chain.
        const settlement = await lied.settle(proof, proof.accepted);
        expect(settlement).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
        const transfers = await usdc.queryFilter(usdc.filters.Transfer!(payer.address), fromBlock);
        expect(transfers.map((transfer) => transfer.transactionHash.toLowerCase())).toEqual([settlement.transaction.toLowerCase()]);
        expect(await provider.getTransactionCount(relayer.address)).toBe(1);
        expect(await balanceOf(resource.payTo)).toBe(PRICE);
      } finally {
        await node.close();
      }
    });
  }
});

describe('the relayer, when no send of its transaction is answered', () => {
  it('awaits the transaction it signed (the node may have it): mined, it is the settlement, never reported failed', async () => {
    // A node that takes every eth_sendRawTransaction and drops the connection instead of answering.
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const forwarded = await (await fetch(local.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).text();
        if ((JSON.parse(body) as { method?: string }).method === 'eth_sendRawTransaction') return void request.socket.destroy();
        response.writeHead(200, { 'content-type': 'application/json' }).end(forwarded);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const relayer = await fundedAccount(provider);
      const silent = inProcessSettler({ rpcUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, chainId: local.chainId, relayerPrivateKey: relayer.privateKey });
      const deps = depsWith();
      const resource = resourceFor();
      const payer = await newPayer();
      const proof = await clientProof(payer, deps, resource);
      const settlement = await silent.settle(proof, proof.accepted);
      expect(settlement).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      expect(await provider.getTransactionCount(relayer.address)).toBe(1);
      expect(await balanceOf(resource.payTo)).toBe(PRICE);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('a remote facilitator (X402_FACILITATOR_URL)', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // /verify and /settle as a facilitator answers them, by the protocol's facilitator in process (signatures really checked).
    const behind = inProcessSettler({ rpcUrl: local.rpcUrl, chainId: local.chainId, relayerPrivateKey: (await fundedAccount(provider)).privateKey });
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        const { paymentPayload, paymentRequirements } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const result = request.url === '/verify' ? await behind.verify(paymentPayload, paymentRequirements) : await behind.settle(paymentPayload, paymentRequirements);
        const refused = 'isValid' in result ? !result.isValid : !result.success;
        response.writeHead(refused ? 400 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('settles through its /verify and /settle: the USDC moves, the answer carries the settlement', async () => {
    const deps = depsWith({ settler: httpSettler(url) });
    const resource = resourceFor();
    const payer = await newPayer();
    const outcome = await requirePayment(deps, headers(v2Header(await clientProof(payer, deps, resource))), resource);
    if (outcome.kind !== 'paid') throw new Error(`not paid: ${JSON.stringify(outcome)}`);
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
    expect(decodePaymentResponseHeader(outcome.responseHeaders['PAYMENT-RESPONSE']!)).toMatchObject({ success: true, transaction: outcome.transaction });
  });

  it('its refusals (answered with an error status) are refusals: invalid_signature, insufficient_funds', async () => {
    const deps = depsWith({ settler: httpSettler(url) });
    const resource = resourceFor();
    const payer = await newPayer();
    const forged = { x402Version: 1, scheme: 'exact', network: `eip155:${local.chainId}`, payload: await signed(payer, { to: resource.payTo }, Wallet.createRandom()) };
    await expectRefused(deps, headers(v1Header(forged)), resource, 'invalid_signature', { address: payer.address, funds: 5_000_000n }, forged.payload.authorization.nonce);
    const poor = await newPayer(0n);
    const v1 = await v1Proof(poor, { to: resource.payTo });
    await expectRefused(deps, headers(v1Header(v1)), resource, 'insufficient_funds', { address: poor.address, funds: 0n }, v1.payload.authorization.nonce);
  });

  it('one that cannot be reached answers 503, and the proof can come again', async () => {
    const deps = depsWith({ settler: httpSettler('http://127.0.0.1:9', 2_000) });
    const resource = resourceFor();
    const payer = await newPayer();
    const proof = headers(v2Header(await clientProof(payer, deps, resource)));
    await expect(requirePayment(deps, proof, resource)).rejects.toMatchObject({ name: 'DependencyUnavailableError' });
    const outcome = await requirePayment({ ...deps, settler }, proof, resource);
    expect(outcome.kind).toBe('paid');
  });
});

describe('sign-in-with-x', () => {
  const SUBSCRIBE = `${BASE_URL}/api/x402/subscribe`;

  /** The extension's own client: the challenge's offer, signed by `signer` for the resource. */
  const signIn = async (deps: AppDeps, signer: EVMSigner, change: Partial<CompleteSIWxInfo> = {}) => {
    const offer = await signInWithXChallenge(deps, { resource: SUBSCRIBE });
    const info: CompleteSIWxInfo = { ...offer.info, chainId: offer.supportedChains[0]!.chainId, type: 'eip191', ...change };
    const payload = await createSIWxPayload(info, signer, change.domain ? `http://${change.domain}` : SUBSCRIBE);
    return headers({ 'SIGN-IN-WITH-X': encodeSIWxHeader(payload) });
  };
  const account = () => privateKeyToAccount(Wallet.createRandom().privateKey as `0x${string}`);
  const refused = (promise: Promise<unknown>) => expect(promise).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/^sign-in-with-x refused/) });

  it('a valid proof names its wallet; no header, no wallet', async () => {
    const deps = depsWith();
    const wallet = account();
    expect(await verifySignInWithX(deps, await signIn(deps, wallet), { resource: SUBSCRIBE })).toEqual({ wallet: wallet.address.toLowerCase() });
    expect(await verifySignInWithX(deps, headers(), { resource: SUBSCRIBE })).toBeUndefined();
  });

  it('refuses another domain, another resource and another chain', async () => {
    const deps = depsWith();
    await refused(verifySignInWithX(deps, await signIn(deps, account(), { domain: 'evil.example', uri: 'http://evil.example/api/x402/subscribe' }), { resource: SUBSCRIBE }));
    await refused(verifySignInWithX(deps, await signIn(deps, account()), { resource: ORDERS }));
    await refused(verifySignInWithX(deps, await signIn(deps, account(), { chainId: 'eip155:8453' }), { resource: SUBSCRIBE }));
  });

  it('refuses an expired proof and one issued in the future', async () => {
    const deps = depsWith();
    await refused(verifySignInWithX(deps, await signIn(deps, account(), { expirationTime: new Date(Date.now() - 1_000).toISOString() }), { resource: SUBSCRIBE }));
    await refused(verifySignInWithX(deps, await signIn(deps, account(), { issuedAt: new Date(Date.now() + 10 * 60_000).toISOString() }), { resource: SUBSCRIBE }));
  });

  it('uses a nonce once, and only one it issued', async () => {
    const deps = depsWith();
    const proof = await signIn(deps, account());
    await verifySignInWithX(deps, proof, { resource: SUBSCRIBE });
    await refused(verifySignInWithX(deps, proof, { resource: SUBSCRIBE }));
    await refused(verifySignInWithX(deps, await signIn(deps, account(), { nonce: 'a'.repeat(57) }), { resource: SUBSCRIBE }));
  });

  it('refuses a signature not the address’s, and a header that is no proof', async () => {
    const deps = depsWith();
    const wallet = account();
    const forger = account();
    await refused(verifySignInWithX(deps, await signIn(deps, { address: wallet.address, signMessage: ({ message }) => forger.signMessage({ message }) }), { resource: SUBSCRIBE }));
    await refused(verifySignInWithX(deps, headers({ 'SIGN-IN-WITH-X': Buffer.from('{"domain":1}').toString('base64') }), { resource: SUBSCRIBE }));
  });

  it('a contract wallet (EIP-1271) signs through its owner, asked on the chain', async () => {
    const deps = depsWith();
    const owner = account();
    const factory = new ContractFactory(ownedWalletArtifact.abi, ownedWalletArtifact.bytecode, funder);
    const contract = await factory.deploy(owner.address);
    await contract.waitForDeployment();
    const address = (await contract.getAddress()) as `0x${string}`;
    const asWallet: EVMSigner = { address, signMessage: ({ message }) => owner.signMessage({ message }) };
    expect(await verifySignInWithX(deps, await signIn(deps, asWallet), { resource: SUBSCRIBE })).toEqual({ wallet: address.toLowerCase() });
    const stranger = account();
    await refused(verifySignInWithX(deps, await signIn(deps, { address, signMessage: ({ message }) => stranger.signMessage({ message }) }), { resource: SUBSCRIBE }));
  });
});
