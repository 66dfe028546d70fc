/**
 * A payer who spends its own authorization's nonce between the service's verification and the
 * relayer's transaction: a `cancelAuthorization`, or a competing authorization (1 unit to itself)
 * with the same nonce, sent with a higher priority fee into the same block. The nonce is then used,
 * but nothing reached the shop: no order, no plan, no key, no proof. Runs on a chain of its own with
 * automine off, so this file orders the transactions of a block.
 */
import { Contract, Signature, Wallet, type HDNodeWallet, hexlify, randomBytes, toQuantity, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_RELAYER, startAnvil, type RunningAnvil } from '../../scripts/local/anvil';
import { deployLocalContracts, type LocalContracts } from '../../scripts/local/deploy-contracts';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import { inProcessSettler } from '../../shared/adapters/x402/in-process-settler';
import { x402Protocol } from '../../shared/adapters/x402/protocol';
import type { AppDeps } from '../../shared/app/deps';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { requirePayment, type PaidResource } from '../../shared/app/x402/gate';
import { x402Order } from '../../shared/app/x402/orders';
import { x402Subscribe } from '../../shared/app/x402/subscribe';
import { memoryDeps } from '../../shared/composition';
import { InventoryUpsertInput } from '../../shared/domain/inventory';
import { newMerchant } from '../../shared/domain/merchant';
import { paymentProofClaimId, type PaymentPayload } from '../../shared/domain/x402';
import { slugClaimId } from '../../shared/domain/shop';
import type { PaymentSettler } from '../../shared/ports/payment-settler';
import { transferWithAuthorization } from '../support/eip3009';
import { protocolProof, v2ProofHeader } from '../support/x402';

const BASE_URL = 'http://localhost:7071';
const GWEI = 10n ** 9n;

let anvil: RunningAnvil;
let provider: JsonRpcProvider;
let contracts: LocalContracts;
let usdc: Contract;
let settler: PaymentSettler;
const platform = Wallet.createRandom().address.toLowerCase();

beforeAll(async () => {
  anvil = await startAnvil();
  contracts = await deployLocalContracts(anvil.rpcUrl, ANVIL_RELAYER.privateKey);
  provider = createProvider(anvil.rpcUrl, anvil.chainId);
  usdc = new Contract(contracts.usdc, testUsdcArtifact.abi, new Wallet(ANVIL_RELAYER.privateKey, provider));
  settler = inProcessSettler({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, relayerPrivateKey: ANVIL_RELAYER.privateKey, confirmationTimeoutMs: 20_000 });
}, 60_000);
afterAll(async () => {
  provider?.destroy();
  await anvil?.close();
});

const depsWith = (overrides: Partial<AppDeps> = {}): AppDeps => {
  const base = memoryDeps();
  return memoryDeps({
    settler,
    x402: x402Protocol({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId }),
    settings: {
      ...base.settings,
      baseUrl: BASE_URL,
      siweDomain: 'localhost:7071',
      chainId: anvil.chainId,
      platformWallet: platform,
      tokens: [{ symbol: 'USDC', address: contracts.usdc, decimals: 6 }],
    },
    ...overrides,
  });
};

const balanceOf = async (address: string): Promise<bigint> => usdc.getFunction('balanceOf').staticCall(address);

/** A payer with USDC and some ETH (it sends its own spoiling transaction). */
const newPayer = async (funds = 500_000_000n) => {
  const payer = Wallet.createRandom().connect(provider);
  await provider.send('anvil_setBalance', [payer.address, toQuantity(10n ** 19n)]);
  await (await usdc.getFunction('mint').send(payer.address, funds)).wait();
  return payer;
};

/** A v2 proof made by the protocol's own client for the resource's challenge. */
const proofFor = (payer: HDNodeWallet, challenge: string): Promise<PaymentPayload> => protocolProof(payer.privateKey, challenge);

interface Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

type Spoiler = 'cancel' | 'competing';

/**
 * What the payer sends to spend the nonce first, signed by itself, with a priority fee far above the
 * relayer's: `cancelAuthorization`, or its own authorization of 1 unit to itself with the same nonce.
 */
const spoil = async (payer: HDNodeWallet, authorization: Authorization, how: Spoiler) => {
  const token = new Contract(contracts.usdc, testUsdcArtifact.abi, payer);
  const domain = { name: 'USD Coin', version: '2', chainId: anvil.chainId, verifyingContract: contracts.usdc };
  const fees = { maxPriorityFeePerGas: 50n * GWEI, maxFeePerGas: 100n * GWEI, gasLimit: 200_000n };
  if (how === 'cancel') {
    const types = { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] };
    const { v, r, s } = Signature.from(await payer.signTypedData(domain, types, { authorizer: payer.address, nonce: authorization.nonce }));
    return token.getFunction('cancelAuthorization').send(payer.address, authorization.nonce, v, r, s, fees);
  }
  const own = { ...authorization, to: payer.address, value: '1', validAfter: '0' };
  const { v, r, s } = Signature.from(await payer.signTypedData(domain, { TransferWithAuthorization: transferWithAuthorization }, own));
  return token.getFunction('transferWithAuthorization').send(own.from, own.to, own.value, own.validAfter, own.validBefore, own.nonce, v, r, s, fees);
};

/** Transactions waiting for the next block. */
const pendingCount = async () => {
  const block = (await provider.send('eth_getBlockByNumber', ['pending', false])) as { transactions: string[] };
  return block.transactions.length;
};

/**
 * The settler as it runs, front-run: once the relayer's transaction waits in the pool (verification
 * passed, nothing is mined), the payer sends its spoiling one with a higher priority fee, and one
 * block holds both, the payer's first. The relayer's transaction is mined, and reverts.
 */
const frontRunBy = (payer: HDNodeWallet, how: Spoiler): PaymentSettler => ({
  verify: (payload, requirements) => settler.verify(payload, requirements),
  settle: async (payload, requirements) => {
    const authorization = (payload.payload as { authorization: Authorization }).authorization;
    await provider.send('evm_setAutomine', [false]);
    try {
      let settled = false;
      const settling = settler.settle(payload, requirements).finally(() => (settled = true));
      const waitFor = async (count: number) => {
        for (const until = Date.now() + 15_000; (await pendingCount()) < count; await new Promise((resolve) => setTimeout(resolve, 20))) {
          if (settled || Date.now() > until) throw new Error(`the relayer's transaction never reached the pool: ${JSON.stringify(await settling)}`);
        }
      };
      await waitFor(1);
      await spoil(payer, authorization, how);
      await waitFor(2);
      await provider.send('evm_mine', []);
      const result = await settling;
      // The block did hold both: the relayer's transaction is mined, and failed.
      expect(result.success).toBe(false);
      return result;
    } finally {
      await provider.send('evm_setAutomine', [true]);
    }
  },
});

const headerOf = (payload: PaymentPayload) => new Headers(v2ProofHeader(payload));

/** A shop with a split (an address here: the USDC goes to it) and an item priced 2.50. */
const shop = async (deps: AppDeps) => {
  const merchant = Wallet.createRandom().address.toLowerCase();
  const split = Wallet.createRandom().address.toLowerCase();
  const now = Date.now();
  await deps.merchants.upsert(merchant, {
    ...newMerchant(merchant, now),
    split: { address: split, recipients: [{ address: merchant, bps: 10_000, role: 'merchant' }], platformFeeBps: 0, partnerFeeBps: 0, txHash: `0x${'1'.repeat(64)}`, chainId: anvil.chainId, deployedAt: now },
  });
  const slug = `shop-${hexlify(randomBytes(4)).slice(2)}`;
  await deps.claims.create(slugClaimId(slug), { id: slugClaimId(slug), owner: merchant, createdAt: now });
  await upsertInventoryItem(deps, merchant, InventoryUpsertInput.parse({ sku: 'CUP', name: 'A cup', priceUsd: 2.5, stockQty: 5 }));
  return { merchant, split, body: { shopSlug: slug, items: [{ sku: 'CUP', qty: 1 }] } };
};

describe.each<Spoiler>(['cancel', 'competing'])('a nonce spent by the payer before the relayer’s transaction (%s)', (how) => {
  it('an order: 402 nonce_used, no receipt, no stock taken, nothing in the split', async () => {
    const deps = depsWith();
    const { merchant, split, body } = await shop(deps);
    const payer = await newPayer();
    const challenge = await x402Order(deps, new Headers(), body);
    expect(challenge.status).toBe(402);
    const proof = await proofFor(payer, challenge.headers['PAYMENT-REQUIRED']!);
    const answer = await x402Order({ ...deps, settler: frontRunBy(payer, how) }, headerOf(proof), body);
    expect(answer.status).toBe(402);
    expect(answer.body).toMatchObject({ error: 'nonce_used' });
    expect(await balanceOf(split)).toBe(0n);
    expect((await deps.receipts.listByWallet(merchant, { limit: 10 })).receipts).toEqual([]);
    // The nonce is used on chain; the proof stays refused, however often it comes.
    const { from, nonce } = (proof.payload as unknown as { authorization: Authorization }).authorization;
    expect(await usdc.getFunction('authorizationState').staticCall(from, nonce)).toBe(true);
    const again = await x402Order(deps, headerOf(proof), body);
    expect(again.status).toBe(402);
    expect((await deps.receipts.listByWallet(merchant, { limit: 10 })).receipts).toEqual([]);
  });

  it('a plan: 402 nonce_used, no plan set, no key issued', async () => {
    const deps = depsWith();
    const payer = await newPayer();
    const challenge = await x402Subscribe(deps, new Headers(), { planKey: 'pro' });
    expect(challenge.status).toBe(402);
    const before = await balanceOf(platform);
    const proof = await proofFor(payer, challenge.headers['PAYMENT-REQUIRED']!);
    const answer = await x402Subscribe({ ...deps, settler: frontRunBy(payer, how) }, headerOf(proof), { planKey: 'pro' });
    expect(answer.status).toBe(402);
    expect(answer.body).toMatchObject({ error: 'nonce_used' });
    expect(answer.body).not.toHaveProperty('apiKey');
    expect(await balanceOf(platform)).toBe(before);
    const wallet = payer.address.toLowerCase();
    expect((await deps.merchants.get(wallet, wallet))?.value.plan ?? null).toBeNull();
    expect(await deps.subscriptions.list({ wallet })).toEqual([]);
  });
});

describe('a settlement whose outcome is unknown (the settler threw)', () => {
  it('is paid only by a transaction carrying the transfer: a cancelled nonce is refused, never paid without a hash', async () => {
    const payer = await newPayer();
    const resource: PaidResource = { resource: `${BASE_URL}/api/x402/orders`, description: 'An order', payTo: Wallet.createRandom().address.toLowerCase(), amount: 1_000_000n };
    const cancelling: PaymentSettler = {
      verify: (payload, requirements) => settler.verify(payload, requirements),
      settle: async (payload) => {
        await (await spoil(payer, (payload.payload as { authorization: Authorization }).authorization, 'cancel')).wait();
        throw new Error('socket hang up');
      },
    };
    const deps = depsWith({ settler: cancelling });
    const challenged = await requirePayment(deps, new Headers(), resource);
    if (challenged.kind !== 'challenge') throw new Error('expected a challenge');
    const proof = await proofFor(payer, challenged.reply.headers['PAYMENT-REQUIRED']!);
    const outcome = await requirePayment(deps, headerOf(proof), resource);
    expect(outcome).toMatchObject({ kind: 'challenge', reply: { status: 402, body: { error: 'nonce_used' } } });
    const { from, nonce } = (proof.payload as unknown as { authorization: Authorization }).authorization;
    const id = paymentProofClaimId(anvil.chainId, contracts.usdc, from, nonce);
    expect((await deps.claims.get(id, id))?.value).toMatchObject({ state: 'failed' });
    expect(await balanceOf(resource.payTo)).toBe(0n);
  });
});
