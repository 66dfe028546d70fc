/**
 * The relayer's gas rules for x402 against the run's anvil chain (as test/app/x402-gate.test.ts):
 * the daily settlement budget in the gate, the units it gives back when nothing is sent, and the
 * minimum x402 order. The distribution side is in test/app/reconcile.test.ts.
 */
import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import { Contract, NonceManager, Wallet, hexlify, randomBytes, type BaseWallet, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { x402Protocol } from '../../shared/adapters/x402/protocol';
import type { AppDeps } from '../../shared/app/deps';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { relayerBudgetId, relayerBudgetResetAt, takeRelayerUnit } from '../../shared/app/relayer-budget';
import { requirePayment, type GateOutcome, type PaidResource } from '../../shared/app/x402/gate';
import { x402Order } from '../../shared/app/x402/orders';
import { LOCAL_GAS_SETTINGS, loadConfig } from '../../shared/config';
import { memoryDeps, setDeps } from '../../shared/composition';
import { DomainError } from '../../shared/domain/errors';
import { InventoryUpsertInput } from '../../shared/domain/inventory';
import { newMerchant } from '../../shared/domain/merchant';
import { slugClaimId } from '../../shared/domain/shop';
import { paymentProofClaimId } from '../../shared/domain/x402';
import { toErrorResponse } from '../../shared/http/errors';
import { Reply, httpFunction } from '../../shared/http/function';
import { routes } from '../../shared/http/routes';
import type { PaymentSettler } from '../../shared/ports/payment-settler';
import { transferWithAuthorization } from '../support/eip3009';
import { x402TestChain } from '../support/x402';

const local = inject('chain');
const usdcAddress = local.usdc.toLowerCase();
const BASE_URL = 'http://localhost:7071';
const ORDERS = `${BASE_URL}/api/x402/orders`;
const PRICE = 2_000_000n;

let provider: JsonRpcProvider;
let funder: NonceManager;
let usdc: Contract;
let settler: PaymentSettler;
const protocol = x402Protocol({ rpcUrl: local.rpcUrl, chainId: local.chainId });

beforeAll(async () => {
  ({ provider, funder, usdc, settler } = await x402TestChain());
});
afterAll(() => provider.destroy());

/** A settler that settles through `inner` and counts what it was asked to settle. */
const counting = (inner: PaymentSettler = settler) => {
  const settled: string[] = [];
  const wrapped: PaymentSettler = {
    verify: (payload, requirements) => inner.verify(payload, requirements),
    settle: async (payload, requirements) => {
      settled.push(JSON.stringify(payload.payload));
      return inner.settle(payload, requirements);
    },
  };
  return { settler: wrapped, settled };
};

const depsWith = (relayer: Partial<AppDeps['settings']['relayer']>, overrides: Partial<AppDeps> = {}): AppDeps => {
  const base = memoryDeps();
  return memoryDeps({
    settler,
    x402: protocol,
    settings: {
      ...base.settings,
      baseUrl: BASE_URL,
      siweDomain: 'localhost:7071',
      chainId: local.chainId,
      tokens: [{ symbol: 'USDC', address: usdcAddress, decimals: 6 }],
      relayer: { ...base.settings.relayer, ...relayer },
    },
    ...overrides,
  });
};

const balanceOf = async (address: string): Promise<bigint> => usdc.getFunction('balanceOf').staticCall(address);
const authorizationUsed = async (from: string, nonce: string): Promise<boolean> => usdc.getFunction('authorizationState').staticCall(from, nonce);

const newPayer = async (funds = 5_000_000n) => {
  const payer = Wallet.createRandom();
  if (funds > 0n) await (await usdc.getFunction('mint').send(payer.address, funds)).wait();
  return payer;
};

const resourceFor = (payTo = Wallet.createRandom().address.toLowerCase(), amount = PRICE): PaidResource => ({ resource: ORDERS, description: 'An order', payTo, amount });

/** A v1 proof (`X-PAYMENT`) of an EIP-3009 authorization signed here, with its nonce. */
const proofOf = async (payer: BaseWallet, to: string, amount = PRICE, validForSeconds = 120) => {
  const authorization = { from: payer.address, to, value: amount.toString(), validAfter: '0', validBefore: String(Math.floor(Date.now() / 1000) + validForSeconds), nonce: hexlify(randomBytes(32)) };
  const domain = { name: 'USD Coin', version: '2', chainId: local.chainId, verifyingContract: local.usdc };
  const signature = await payer.signTypedData(domain, { TransferWithAuthorization: transferWithAuthorization }, authorization);
  const payload = { x402Version: 1, scheme: 'exact', network: `eip155:${local.chainId}`, payload: { authorization, signature } };
  return { headers: new Headers({ 'X-PAYMENT': Buffer.from(JSON.stringify(payload)).toString('base64') }), nonce: authorization.nonce };
};

/** How many units of today's settlement budget are taken. */
const settlementsTaken = async (deps: AppDeps) => {
  const id = relayerBudgetId('settlement', deps.clock.now());
  return Number((await deps.claims.get(id, id))?.value.owner ?? 0);
};

const spent = (error: unknown) => error instanceof DomainError && error.code === 'relayer_budget_spent';

describe('the daily relayer budget', () => {
  it('hands out exactly its limit to concurrent takers, per kind of work, and a unit given back (once) can be taken again', async () => {
    const deps = depsWith({ settlementsPerDay: 5, distributionsPerDay: 2 });
    const units = await Promise.all(Array.from({ length: 12 }, () => takeRelayerUnit(deps, 'settlement')));
    expect(units.filter(Boolean)).toHaveLength(5);
    expect(await takeRelayerUnit(deps, 'settlement')).toBeUndefined();
    // Distributions have a count of their own.
    const distributions = await Promise.all(Array.from({ length: 6 }, () => takeRelayerUnit(deps, 'distribution')));
    expect(distributions.filter(Boolean)).toHaveLength(2);
    const unit = units.find(Boolean)!;
    await unit.giveBack();
    await unit.giveBack();
    expect(await settlementsTaken(deps)).toBe(4);
    expect(await takeRelayerUnit(deps, 'settlement')).toBeDefined();
    expect(await takeRelayerUnit(deps, 'settlement')).toBeUndefined();
  });

  it('is renewed at midnight UTC', async () => {
    let now = Date.UTC(2026, 4, 1, 23, 59, 59);
    const deps = depsWith({ settlementsPerDay: 1 }, { clock: { now: () => now } });
    expect(await takeRelayerUnit(deps, 'settlement')).toBeDefined();
    expect(await takeRelayerUnit(deps, 'settlement')).toBeUndefined();
    expect(relayerBudgetResetAt(now)).toBe(Date.UTC(2026, 4, 2));
    now = Date.UTC(2026, 4, 2);
    expect(await takeRelayerUnit(deps, 'settlement')).toBeDefined();
  });
});

describe('an x402 settlement within the budget', () => {
  it('once the day’s settlements are spent: 503 relayer_budget_spent with resetAt and Retry-After, and no settlement sent, nothing moved, nothing recorded', async () => {
    const { settler: watched, settled } = counting();
    const deps = depsWith({ settlementsPerDay: 1 }, { settler: watched });
    const resource = resourceFor();
    const first = await newPayer();
    expect((await requirePayment(deps, (await proofOf(first, resource.payTo)).headers, resource)).kind).toBe('paid');
    expect(settled).toHaveLength(1);

    const second = await newPayer();
    const { headers, nonce } = await proofOf(second, resource.payTo);
    const error = await requirePayment(deps, headers, resource).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(spent(error)).toBe(true);
    const now = Date.now();
    const answer = toErrorResponse(error, now);
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ error: 'relayer_budget_spent', message: expect.stringMatching(/nothing was charged/), resetAt: relayerBudgetResetAt(now) });
    expect(Number(answer.headers['retry-after'])).toBe(Math.ceil((relayerBudgetResetAt(now) - now) / 1000));
    expect(answer.unexpected).toBe(false);

    expect(settled).toHaveLength(1);
    expect(await balanceOf(second.address)).toBe(5_000_000n);
    expect(await authorizationUsed(second.address, nonce)).toBe(false);
    const id = paymentProofClaimId(local.chainId, usdcAddress, second.address, nonce);
    expect(await deps.claims.get(id, id)).toBeUndefined();
    expect(await balanceOf(resource.payTo)).toBe(PRICE);
    expect(await settlementsTaken(deps)).toBe(1);
  });

  it('concurrent payers never get more settlements than the budget: the rest answer relayer_budget_spent, never a 500', async () => {
    const { settler: watched, settled } = counting();
    const deps = depsWith({ settlementsPerDay: 3 }, { settler: watched });
    const resource = resourceFor();
    const proofs: Headers[] = [];
    for (let n = 0; n < 8; n++) proofs.push((await proofOf(await newPayer(), resource.payTo)).headers);
    const outcomes = await Promise.all(
      proofs.map((headers) =>
        requirePayment(deps, headers, resource).then(
          (outcome: GateOutcome) => outcome.kind,
          (error: unknown) => (spent(error) ? 'spent' : `unexpected: ${String(error)}`),
        ),
      ),
    );
    expect(outcomes.filter((kind) => kind === 'paid'), JSON.stringify(outcomes)).toHaveLength(3);
    expect(outcomes.filter((kind) => kind === 'spent')).toHaveLength(5);
    expect(settled).toHaveLength(3);
    expect(await settlementsTaken(deps)).toBe(3);
    expect(await balanceOf(resource.payTo)).toBe(3n * PRICE);
  });

  it('gives the unit back when nothing is sent: a refused settlement, one whose settler could not be asked', async () => {
    const refusing: PaymentSettler = {
      verify: (payload, requirements) => settler.verify(payload, requirements),
      settle: async (_payload, requirements) => ({ success: false, errorReason: 'invalid_transaction_state', transaction: '', network: requirements.network }),
    };
    const throwing: PaymentSettler = {
      verify: (payload, requirements) => settler.verify(payload, requirements),
      settle: async () => {
        throw new Error('socket hang up');
      },
    };
    const deps = depsWith({ settlementsPerDay: 1 });
    const resource = resourceFor();

    const refused = await requirePayment({ ...deps, settler: refusing }, (await proofOf(await newPayer(), resource.payTo)).headers, resource);
    expect(refused.kind).toBe('challenge');
    expect(await settlementsTaken(deps)).toBe(0);

    await expect(requirePayment({ ...deps, settler: throwing }, (await proofOf(await newPayer(), resource.payTo)).headers, resource)).rejects.toMatchObject({ name: 'DependencyUnavailableError' });
    expect(await settlementsTaken(deps)).toBe(0);

    // The one unit of the day is still there for a settlement that happens.
    expect((await requirePayment(deps, (await proofOf(await newPayer(), resource.payTo)).headers, resource)).kind).toBe('paid');
    expect(await settlementsTaken(deps)).toBe(1);
  });

  it('keeps the unit of a settlement sent and not yet confirmed (pending)', async () => {
    const pending: PaymentSettler = {
      verify: (payload, requirements) => settler.verify(payload, requirements),
      settle: async (_payload, requirements) => ({ success: false, errorReason: 'settlement_pending', transaction: `0x${'ab'.repeat(32)}`, network: requirements.network }),
    };
    const deps = depsWith({ settlementsPerDay: 1 }, { settler: pending });
    const resource = resourceFor();
    await expect(requirePayment(deps, (await proofOf(await newPayer(), resource.payTo)).headers, resource)).rejects.toMatchObject({ name: 'DependencyUnavailableError' });
    expect(await settlementsTaken(deps)).toBe(1);
    await expect(requirePayment({ ...deps, settler }, (await proofOf(await newPayer(), resource.payTo)).headers, resource)).rejects.toSatisfy(spent);
  });

  it('a settlement sent again on recovery (its first never reached the chain) takes a unit of its own: none left, 503 and nothing sent', async () => {
    let offset = 0;
    const neverSent: PaymentSettler = {
      verify: (payload, requirements) => settler.verify(payload, requirements),
      settle: async (_payload, requirements) => ({ success: false, errorReason: 'settlement_pending', transaction: `0x${'cd'.repeat(32)}`, network: requirements.network }),
    };
    const clock = { now: () => Date.now() + offset };
    const deps = depsWith({ settlementsPerDay: 1 }, { settler: neverSent, clock });
    const resource = resourceFor();
    const payer = await newPayer();
    const { headers } = await proofOf(payer, resource.payTo, PRICE, 400);
    await expect(requirePayment(deps, headers, resource)).rejects.toMatchObject({ name: 'DependencyUnavailableError' });
    expect(await settlementsTaken(deps)).toBe(1);
    // Its lease over, the proof comes again: the chain has no trace of it, so it would be settled again.
    offset = 3 * 60_000;
    const { settler: sending, settled } = counting();
    await expect(requirePayment({ ...deps, settler: sending }, headers, resource)).rejects.toSatisfy(spent);
    expect(settled).toEqual([]);
    expect(await balanceOf(resource.payTo)).toBe(0n);
  });

  it('takes nothing for a challenge, a refused proof or a replay', async () => {
    const deps = depsWith({ settlementsPerDay: 1 });
    const resource = resourceFor();
    expect((await requirePayment(deps, new Headers(), resource)).kind).toBe('challenge');
    const poor = await newPayer(PRICE - 1n);
    expect((await requirePayment(deps, (await proofOf(poor, resource.payTo)).headers, resource)).kind).toBe('challenge');
    expect(await settlementsTaken(deps)).toBe(0);
    const { headers } = await proofOf(await newPayer(), resource.payTo);
    expect((await requirePayment(deps, headers, resource)).kind).toBe('paid');
    // The same proof again is answered from its record: no second unit, even with the budget spent.
    await expect(requirePayment(deps, headers, resource)).rejects.toMatchObject({ code: 'conflict' });
    expect(await settlementsTaken(deps)).toBe(1);
  });
});

describe('an x402 order', () => {
  /** A shop with one item at `priceUsd`, whose split is a fresh address. */
  const shop = async (deps: AppDeps, priceUsd: number) => {
    const merchant = Wallet.createRandom().address.toLowerCase();
    const split = Wallet.createRandom().address.toLowerCase();
    const now = Date.now();
    await deps.merchants.upsert(merchant, {
      ...newMerchant(merchant, now),
      split: { address: split, recipients: [{ address: merchant, bps: 10_000, role: 'merchant' }], platformFeeBps: 0, partnerFeeBps: 0, txHash: `0x${'1'.repeat(64)}`, chainId: local.chainId, deployedAt: now },
    });
    const slug = `gas-${hexlify(randomBytes(6)).slice(2)}`;
    await deps.claims.create(slugClaimId(slug), { id: slugClaimId(slug), owner: merchant, createdAt: now });
    await upsertInventoryItem(deps, merchant, InventoryUpsertInput.parse({ sku: 'ITEM', name: 'An item', priceUsd, stockQty: -1 }));
    return { merchant, split, slug };
  };

  /** The x402-orders function as functions/x402-orders.ts registers it, called as the host calls it. */
  const orders = httpFunction(routes.x402Orders, async ({ deps, headers, body }) => {
    const answer = await x402Order(deps, headers, body);
    return new Reply(answer.status, answer.body as never, [], answer.headers);
  });
  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const response = (await orders.handler(
      new HttpRequest({ method: 'POST', url: ORDERS, headers: { 'content-type': 'application/json', ...headers }, body: { string: JSON.stringify(body) } }),
      new InvocationContext({ functionName: 'x402-orders', logHandler: () => {} }),
    )) as HttpResponseInit;
    return { status: response.status ?? 200, headers: (response.headers ?? {}) as Record<string, string>, json: JSON.parse(String(response.body)) as Record<string, unknown> };
  };

  it('below X402_MIN_ORDER_USDC is refused 400 invalid_input naming the minimum, before any challenge', async () => {
    const deps = depsWith({ x402MinOrder: 2_000_000n });
    setDeps(deps);
    const { slug } = await shop(deps, 1.99);
    const answer = await post({ shopSlug: slug, items: [{ sku: 'ITEM', qty: 1 }] });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: 'invalid_input', message: 'items: an x402 order totals between 2 and 100000 USDC', field: 'items', amount: '1990000', minimum: '2000000' });
    expect(answer.headers['PAYMENT-REQUIRED']).toBeUndefined();
    // At the minimum: the challenge.
    expect((await post({ shopSlug: slug, items: [{ sku: 'ITEM', qty: 2 }] })).status).toBe(402);
    const { slug: exact } = await shop(deps, 2);
    expect((await post({ shopSlug: exact, items: [{ sku: 'ITEM', qty: 1 }] })).status).toBe(402);
  });

  it('with the settlement budget spent is answered 503 relayer_budget_spent by the route, and makes no receipt', async () => {
    const { settler: watched, settled } = counting();
    const deps = depsWith({ settlementsPerDay: 0 }, { settler: watched });
    setDeps(deps);
    const { merchant, split, slug } = await shop(deps, 2);
    const payer = await newPayer();
    const { headers } = await proofOf(payer, split);
    const answer = await post({ shopSlug: slug, items: [{ sku: 'ITEM', qty: 1 }] }, Object.fromEntries(headers));
    expect(answer.status).toBe(503);
    expect(answer.json).toMatchObject({ error: 'relayer_budget_spent', resetAt: expect.any(Number) });
    expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    expect(settled).toEqual([]);
    expect(await balanceOf(payer.address)).toBe(5_000_000n);
    expect(await balanceOf(split)).toBe(0n);
    expect((await deps.receipts.inStatuses(['generated', 'paid'], { limit: 100 })).filter((receipt) => receipt.wallet === merchant)).toEqual([]);
  });

  it('under the local settings, down to the interface document’s 0.10 USDC', async () => {
    const deps = depsWith({});
    setDeps(deps);
    expect(deps.settings.relayer.x402MinOrder).toBe(100_000n);
    const { slug } = await shop(deps, 0.1);
    expect((await post({ shopSlug: slug, items: [{ sku: 'ITEM', qty: 1 }] })).status).toBe(402);
    const { slug: under } = await shop(deps, 0.09);
    expect((await post({ shopSlug: under, items: [{ sku: 'ITEM', qty: 1 }] })).json).toMatchObject({ error: 'invalid_input', minimum: '100000' });
  });
});

describe('the settings', () => {
  const production = { STORE: 'memory', JWT_SECRET: 'x'.repeat(32), DATA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };

  it('default to the production rules; the local ones keep small orders and distribute whatever a split holds', () => {
    expect(loadConfig(production)).toMatchObject({
      SETTLEMENT_DAILY_BUDGET: 1_000,
      DISTRIBUTION_DAILY_BUDGET: 1_000,
      X402_MIN_ORDER_USDC: 2_000_000n,
      DISTRIBUTE_MIN_USDC: 5_000_000n,
      DISTRIBUTE_MIN_USDT: 5_000_000n,
      DISTRIBUTE_MIN_ETH_WEI: 1_250_000_000_000_000n,
    });
    expect(loadConfig({ ...production, ...LOCAL_GAS_SETTINGS })).toMatchObject({ X402_MIN_ORDER_USDC: 100_000n, DISTRIBUTE_MIN_USDC: 0n, DISTRIBUTE_MIN_USDT: 0n, DISTRIBUTE_MIN_ETH_WEI: 0n });
  });

  it('refuse a minimum order below the interface document’s 100000, and amounts that are not whole atomic units', () => {
    expect(loadConfig({ ...production, X402_MIN_ORDER_USDC: '100000' }).X402_MIN_ORDER_USDC).toBe(100_000n);
    expect(() => loadConfig({ ...production, X402_MIN_ORDER_USDC: '99999' })).toThrowError(/X402_MIN_ORDER_USDC: must be between 100000/);
    expect(() => loadConfig({ ...production, X402_MIN_ORDER_USDC: '100000000001' })).toThrowError(/X402_MIN_ORDER_USDC/);
    for (const bad of ['1.5', '-1', '1e6', 'lots']) expect(() => loadConfig({ ...production, DISTRIBUTE_MIN_USDC: bad }), bad).toThrowError(/DISTRIBUTE_MIN_USDC: must be a whole number/);
    expect(() => loadConfig({ ...production, SETTLEMENT_DAILY_BUDGET: '-1' })).toThrowError(/SETTLEMENT_DAILY_BUDGET/);
  });
});
