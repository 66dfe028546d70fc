import { receiptCore } from '../support/fixtures';
import { Contract, NonceManager, Wallet, hexlify, randomBytes, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { ANVIL_ACCOUNTS } from '../../scripts/local/anvil';
import { testUsdcArtifact, testUsdtArtifact } from '../../shared/adapters/evm/artifacts';
import type { EvmChain } from '../../shared/adapters/evm/chain';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { AppDeps } from '../../shared/app/deps';
import { refundTxClaimId, requestRefund, verifyRefund, watchRefunds } from '../../shared/app/payments/refunds';
import { memoryDeps, setDeps } from '../../shared/composition';
import { DomainError } from '../../shared/domain/errors';
import { CHAIN_CLOCK_SKEW_SECONDS, type PayTokenSymbol, type Quote } from '../../shared/domain/payment';
import { newReceipt, type Receipt, type ReceiptStatus } from '../../shared/domain/receipt';
import { toReceiptView } from '../../shared/domain/receipt-views';
import type { Chain } from '../../shared/ports/chain';
import { chainForTests } from '../support/chain';
import { invoke } from '../support/http';
import { signInAs } from '../support/session';
import { testWallets } from '../support/siwe';

const local = inject('chain');
// This file's own sender on the run's chain: the merchant, who sends the refunds (no other test file sends from it).
const merchantAccount = ANVIL_ACCOUNTS[2];
const merchantWallet = merchantAccount.address;

let provider: JsonRpcProvider;
let chain: EvmChain;
let merchant: NonceManager;
let usdc: Contract;
let usdt: Contract;
let deps: AppDeps;
/** The service's clock, set from the chain's own time where a test needs "before" and "after". */
let now = 0;

const ERC20 = ['function transfer(address to, uint256 value) returns (bool)', 'function balanceOf(address) view returns (uint256)'];

beforeAll(async () => {
  provider = createProvider(local.rpcUrl, local.chainId);
  chain = chainForTests(2);
  merchant = new NonceManager(new Wallet(merchantAccount.privateKey, provider));
  usdc = new Contract(local.usdc, [...testUsdcArtifact.abi, ...ERC20.slice(1)], merchant);
  usdt = new Contract(local.usdt, testUsdtArtifact.abi, merchant);
  await (await usdc.getFunction('mint').send(merchantWallet, 1_000_000_000_000n)).wait();
  await (await usdt.getFunction('mint').send(merchantWallet, 1_000_000_000_000n)).wait();
});
afterAll(() => {
  chain.destroy();
  provider.destroy();
});

/** The latest block's time in ms: the service's clock follows the chain here, so "before" and "after" are the chain's. */
const chainTime = async () => (await provider.getBlock('latest'))!.timestamp * 1000;

beforeEach(async () => {
  now = await chainTime();
  deps = memoryDeps({ chain, clock: { now: () => now } });
  deps = { ...deps, settings: { ...deps.settings, chainId: local.chainId, payments: { ...deps.settings.payments, confirmations: 1 } } };
  setDeps(deps);
});

/** An address without a key behind it: quicker to make than a wallet, by the hundred. */
const randomAddress = () => hexlify(randomBytes(20));
const split = randomAddress;
const newPayer = () => Wallet.createRandom().address.toLowerCase();
const randomHash = () => hexlify(randomBytes(32));

const quoteFor = (token: PayTokenSymbol, amount: bigint, usd: number): Quote => ({
  quoteId: `q_${token}`,
  token,
  tokenAddress: token === 'USDC' ? local.usdc : token === 'USDT' ? local.usdt : null,
  chainId: local.chainId,
  payTo: split(),
  amount: amount.toString(),
  decimals: token === 'ETH' ? 18 : 6,
  usd,
  rate: token === 'ETH' ? 3000 : 1,
  createdAt: now - 60_000,
  expiresAt: now + 540_000,
  uri: 'ethereum:…',
});

/** A receipt paid on chain, as payment verification leaves it (the payment itself is not this file's subject). */
const paidReceipt = async (
  { token = 'USDC', usd = 52.02, paid, status = 'paid', receiptId = `R-${hexlify(randomBytes(5)).slice(2).toUpperCase()}`, payer = newPayer(), wallet = merchantWallet }: { token?: PayTokenSymbol; usd?: number; paid?: bigint; status?: ReceiptStatus; receiptId?: string; payer?: string; wallet?: string } = {},
): Promise<Receipt> => {
  const amount = paid ?? BigInt(Math.round(usd * 100)) * 10_000n + 17n;
  const quote = quoteFor(token, amount, usd);
  const receipt = newReceipt(
    receiptCore({ receiptId, wallet, status, usd }),
    now - 120_000,
    {
      quotes: [quote],
      payments: [{ txHash: randomHash(), token, payer, amount: amount.toString(), expected: amount.toString(), blockNumber: 1, outcome: 'paid', at: now - 30_000 }],
      token,
      buyerWallet: payer,
      transactionHash: randomHash(),
      amountPaid: amount.toString(),
      amountOverpaid: null,
      paidAt: now - 30_000,
    },
  );
  await deps.receipts.create(wallet, receipt);
  return receipt;
};

const stored = async (receipt: Receipt) => (await deps.receipts.get(receipt.wallet, receipt.receiptId))!.value;

const send = async (token: Contract, to: string, amount: bigint | string) => {
  const receipt = await (await token.getFunction('transfer').send(to, BigInt(amount))).wait();
  return { hash: receipt!.hash.toLowerCase(), blockNumber: receipt!.blockNumber };
};
const sendEth = async (to: string, amount: bigint | string) => {
  const receipt = await (await merchant.sendTransaction({ to, value: BigInt(amount) })).wait();
  return { hash: receipt!.hash.toLowerCase(), blockNumber: receipt!.blockNumber };
};

const refused = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
};

describe('requestRefund', () => {
  it('answers what to send: all that is left, in the token that paid, from the merchant to the payer, with an EIP-681 URI', async () => {
    const receipt = await paidReceipt({ usd: 52.02 });
    const answer = await requestRefund(deps, merchantWallet, { id: receipt.receiptId, reason: 'returned' });
    expect(answer).toMatchObject({ ok: true, receiptId: receipt.receiptId, status: 'refund_requested' });
    expect(answer.refund).toEqual({
      refundId: expect.stringMatching(/^rf_/),
      requestedAt: now,
      amountUsd: 52.02,
      token: 'USDC',
      tokenAddress: local.usdc,
      amount: '52020000',
      from: merchantWallet,
      to: receipt.buyerWallet,
      uri: `ethereum:${local.usdc}@${local.chainId}/transfer?address=${receipt.buyerWallet}&uint256=52020000`,
      reason: 'returned',
      txHash: null,
      refundedAt: null,
    });
    const after = await stored(receipt);
    expect(after).toMatchObject({ status: 'refund_requested', previousStatus: 'paid', refunds: [answer.refund] });
    expect(after.statusHistory.at(-1)).toMatchObject({ status: 'refund_requested', by: 'service' });
  });

  it('counts the stablecoins at cents × 10^4 and ETH as the same share of the ETH paid, rounded down', async () => {
    const tether = await paidReceipt({ token: 'USDT', usd: 10 });
    expect((await requestRefund(deps, merchantWallet, { id: tether.receiptId, amountUsd: 3.33 })).refund).toMatchObject({ token: 'USDT', tokenAddress: local.usdt, amount: '3330000' });

    const paid = 3_333_333_333_333_333n;
    const ether = await paidReceipt({ token: 'ETH', usd: 10, paid });
    const { refund } = await requestRefund(deps, merchantWallet, { id: ether.receiptId, amountUsd: 3.33 });
    expect(refund).toMatchObject({ token: 'ETH', tokenAddress: null, amount: ((paid * 333n) / 1000n).toString() });
    expect(refund.uri).toBe(`ethereum:${ether.buyerWallet}@${local.chainId}?value=${(paid * 333n) / 1000n}`);
  });

  it('refunds a reconciled receipt too', async () => {
    const receipt = await paidReceipt({ status: 'reconciled' });
    expect((await requestRefund(deps, merchantWallet, { id: receipt.receiptId })).status).toBe('refund_requested');
  });

  it('answers 400 refund_too_large above what was paid, and changes nothing', async () => {
    const receipt = await paidReceipt({ usd: 52.02 });
    const error = await refused(requestRefund(deps, merchantWallet, { id: receipt.receiptId, amountUsd: 52.03 }));
    expect(error).toMatchObject({ code: 'refund_too_large', details: { field: 'amountUsd', refundableUsd: 52.02 } });
    const after = await stored(receipt);
    expect(after.status).toBe('paid');
    expect(after.refunds ?? []).toEqual([]);
  });

  it.each<ReceiptStatus>(['generated', 'pending', 'checkout_success', 'failed'])('answers 409 receipt_not_payable for a %s receipt', async (status) => {
    const receipt = await paidReceipt({ status });
    expect(await refused(requestRefund(deps, merchantWallet, { id: receipt.receiptId }))).toMatchObject({ code: 'receipt_not_payable' });
  });

  it('answers 404 for another merchant’s receipt or an unknown id', async () => {
    const receipt = await paidReceipt({ wallet: newPayer() });
    expect(await refused(requestRefund(deps, merchantWallet, { id: receipt.receiptId }))).toMatchObject({ code: 'not_found' });
    expect(await refused(requestRefund(deps, merchantWallet, { id: 'R-NOPE' }))).toMatchObject({ code: 'not_found' });
  });

  it('keeps one open refund at a time: 409 conflict until it is verified', async () => {
    const receipt = await paidReceipt();
    await requestRefund(deps, merchantWallet, { id: receipt.receiptId, amountUsd: 1 });
    expect(await refused(requestRefund(deps, merchantWallet, { id: receipt.receiptId, amountUsd: 1 }))).toMatchObject({ code: 'conflict' });
    expect((await stored(receipt)).refunds).toHaveLength(1);
  });

  it('lets only one of two requests at once through', async () => {
    const receipt = await paidReceipt();
    const results = await Promise.allSettled([1, 2, 3].map((usd) => requestRefund(deps, merchantWallet, { id: receipt.receiptId, amountUsd: usd })));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((result) => result.status === 'rejected').map((result) => ((result as PromiseRejectedResult).reason as DomainError).code)).toEqual(['conflict', 'conflict']);
    expect((await stored(receipt)).refunds).toHaveLength(1);
  });

  it('refuses a receipt paid by card (409 refund_through_provider): the USDC came from the provider’s wallet, not the card holder’s', async () => {
    const onramp = (state: NonNullable<Receipt['onramp']>['state']) => ({ provider: 'stripe', sessionId: `cos_${state}`, quoteId: 'q_USDC', redirectTo: 'https://pay.example/s', createdAt: now - 60_000, state, appliedEvents: [] });
    for (const state of ['processing', 'delivered'] as const) {
      const receipt = await paidReceipt();
      await deps.receipts.replace(merchantWallet, { ...receipt, onramp: onramp(state) }, (await deps.receipts.get(merchantWallet, receipt.receiptId))!.etag);
      expect(await refused(requestRefund(deps, merchantWallet, { id: receipt.receiptId })), state).toMatchObject({ code: 'refund_through_provider', details: { provider: 'stripe' } });
      const after = await stored(receipt);
      expect([after.status, after.refunds ?? []], state).toEqual(['paid', []]);
    }
    // A card session that never charged the card (opened, or rejected) leaves a wallet payment refundable.
    for (const state of ['created', 'open', 'rejected'] as const) {
      const receipt = await paidReceipt();
      await deps.receipts.replace(merchantWallet, { ...receipt, onramp: onramp(state) }, (await deps.receipts.get(merchantWallet, receipt.receiptId))!.etag);
      expect((await requestRefund(deps, merchantWallet, { id: receipt.receiptId })).status, state).toBe('refund_requested');
    }
  });
});

describe('verifyRefund on chain', () => {
  it('a full refund: the transfer is verified and the receipt is refunded', async () => {
    const receipt = await paidReceipt({ usd: 52.02 });
    const { refund } = await requestRefund(deps, merchantWallet, { id: receipt.receiptId });
    const tx = await send(usdc, refund.to, refund.amount);
    now = await chainTime();
    expect(await verifyRefund(deps, merchantWallet, receipt.receiptId, tx.hash.toUpperCase().replace('0X', '0x'))).toEqual({ ok: true, receiptId: receipt.receiptId, status: 'refunded', outcome: 'refunded' });
    const after = await stored(receipt);
    expect(after).toMatchObject({ status: 'refunded', previousStatus: 'refund_requested' });
    expect(after.refunds).toEqual([{ ...refund, txHash: tx.hash, refundedAt: now }]);
    expect(toReceiptView(after, deps.settings.baseUrl)).toMatchObject({ status: 'refunded', refundedUsd: 52.02 });
    expect(await usdc.getFunction('balanceOf').staticCall(refund.to)).toBe(52_020_000n);
    expect((await deps.claims.get(refundTxClaimId(local.chainId, tx.hash), refundTxClaimId(local.chainId, tx.hash)))?.value.owner).toBe(receipt.receiptId);
    // Reported again: the same answer; nothing is left to refund.
    expect((await verifyRefund(deps, merchantWallet, receipt.receiptId, tx.hash)).outcome).toBe('refunded');
    expect(await refused(requestRefund(deps, merchantWallet, { id: receipt.receiptId }))).toMatchObject({ code: 'receipt_not_payable' });
  });

  it('a refund sent at once is verified though the chain’s clock runs seconds behind ours', async () => {
    const receipt = await paidReceipt({ usd: 12.5 });
    now = (await chainTime()) + 3_000;
    const { refund } = await requestRefund(deps, merchantWallet, { id: receipt.receiptId });
    const tx = await send(usdc, refund.to, refund.amount);
    expect((await verifyRefund(deps, merchantWallet, receipt.receiptId, tx.hash)).outcome).toBe('refunded');
  });

  it('a partial refund, then the rest', async () => {
    const receipt = await paidReceipt({ usd: 52.02 });
    const first = (await requestRefund(deps, merchantWallet, { id: receipt.receiptId, amountUsd: 20 })).refund;
    expect(first.amount).toBe('20000000');
    await verifyRefund(deps, merchantWallet, receipt.receiptId, (await send(usdc, first.to, first.amount)).hash);
    let after = await stored(receipt);
    expect(after.status).toBe('refunded');
    expect(toReceiptView(after, deps.settings.baseUrl).refundedUsd).toBe(20);

    expect(await refused(requestRefund(deps, merchantWallet, { id: receipt.receiptId, amountUsd: 32.03 }))).toMatchObject({ code: 'refund_too_large', details: { refundableUsd: 32.02 } });
    const rest = await requestRefund(deps, merchantWallet, { id: receipt.receiptId });
    expect(rest).toMatchObject({ status: 'refund_requested', refund: { amountUsd: 32.02, amount: '32020000' } });
    const tx = await send(usdc, rest.refund.to, rest.refund.amount);
    expect((await verifyRefund(deps, merchantWallet, receipt.receiptId, tx.hash)).status).toBe('refunded');
    after = await stored(receipt);
    expect(after.refunds!.map((refund) => [refund.amountUsd, refund.txHash !== null, refund.refundedAt !== null])).toEqual([
      [20, true, true],
      [32.02, true, true],
    ]);
    expect(toReceiptView(after, deps.settings.baseUrl).refundedUsd).toBe(52.02);
    expect(await usdc.getFunction('balanceOf').staticCall(first.to)).toBe(52_020_000n);
    expect(await refused(requestRefund(deps, merchantWallet, { id: receipt.receiptId }))).toMatchObject({ code: 'receipt_not_payable' });
  });

  it('an ETH refund: the transaction’s value from the merchant to the payer', async () => {
    const receipt = await paidReceipt({ token: 'ETH', usd: 30, paid: 10_000_000_000_000_001n });
    const { refund } = await requestRefund(deps, merchantWallet, { id: receipt.receiptId, amountUsd: 10 });
    expect(refund.amount).toBe('3333333333333333');
    const tx = await sendEth(refund.to, refund.amount);
    expect((await verifyRefund(deps, merchantWallet, receipt.receiptId, tx.hash)).outcome).toBe('refunded');
    expect(await provider.getBalance(refund.to)).toBe(3_333_333_333_333_333n);
  });

  describe('answers 400 not_a_payment and changes nothing for a transfer', () => {
    let receipt: Receipt;
    let refund: Awaited<ReturnType<typeof requestRefund>>['refund'];
    beforeEach(async () => {
      receipt = await paidReceipt({ usd: 12.5 });
      refund = (await requestRefund(deps, merchantWallet, { id: receipt.receiptId })).refund;
    });
    const expectRefused = async (hash: string, reason: RegExp) => {
      const error = await refused(verifyRefund(deps, merchantWallet, receipt.receiptId, hash));
      expect(error).toMatchObject({ code: 'not_a_payment', details: { field: 'txHash' } });
      expect(error.message).toMatch(reason);
      const after = await stored(receipt);
      expect(after.status).toBe('refund_requested');
      expect(after.refunds).toEqual([refund]);
      expect(await deps.claims.get(refundTxClaimId(local.chainId, hash), refundTxClaimId(local.chainId, hash))).toBeUndefined();
    };

    it('of the wrong token', async () => {
      await expectRefused((await send(usdt, refund.to, refund.amount)).hash, /moved no USDC/);
    });

    it('to the wrong address', async () => {
      await expectRefused((await send(usdc, newPayer(), refund.amount)).hash, /moved no USDC/);
    });

    it('from another wallet than the merchant’s', async () => {
      const stranger = Wallet.createRandom().connect(provider);
      await provider.send('anvil_setBalance', [stranger.address, '0xDE0B6B3A7640000']);
      const token = new Contract(local.usdc, testUsdcArtifact.abi, stranger);
      await (await token.getFunction('mint').send(stranger.address, BigInt(refund.amount))).wait();
      await expectRefused((await send(token, refund.to, refund.amount)).hash, /moved no USDC/);
    });

    it('of less than the amount', async () => {
      await expectRefused((await send(usdc, refund.to, BigInt(refund.amount) - 1n)).hash, /moved 12499999 of the 12500000/);
    });

    it('mined before the refund was requested', async () => {
      const early = await paidReceipt({ usd: 12.5 });
      const tx = await send(usdc, early.buyerWallet!, 12_500_000n);
      // Requested more than the chain's clock skew after the transaction was mined.
      now = (await chainTime()) + (CHAIN_CLOCK_SKEW_SECONDS + 5) * 1000;
      const late = (await requestRefund(deps, merchantWallet, { id: early.receiptId })).refund;
      const error = await refused(verifyRefund(deps, merchantWallet, early.receiptId, tx.hash));
      expect(error).toMatchObject({ code: 'not_a_payment' });
      expect(error.message).toMatch(/before the refund was requested/);
      expect((await stored(early)).refunds).toEqual([late]);
    });

    it('of ETH where the refund is in USDC', async () => {
      await expectRefused((await sendEth(refund.to, 1n)).hash, /moved no USDC/);
    });
  });

  it('answers 409 transaction_already_used for a hash another refund used', async () => {
    const payer = newPayer();
    const first = await paidReceipt({ usd: 10, payer });
    const second = await paidReceipt({ usd: 5, payer });
    const refund = (await requestRefund(deps, merchantWallet, { id: first.receiptId, amountUsd: 5 })).refund;
    await requestRefund(deps, merchantWallet, { id: second.receiptId });
    const tx = await send(usdc, payer, refund.amount);
    expect((await verifyRefund(deps, merchantWallet, first.receiptId, tx.hash)).outcome).toBe('refunded');
    expect(await refused(verifyRefund(deps, merchantWallet, second.receiptId, tx.hash))).toMatchObject({ code: 'transaction_already_used', details: { field: 'txHash' } });
    expect((await stored(second)).status).toBe('refund_requested');
    // The same receipt's next refund cannot reuse it either.
    await requestRefund(deps, merchantWallet, { id: first.receiptId });
    expect(await refused(verifyRefund(deps, merchantWallet, first.receiptId, tx.hash))).toMatchObject({ code: 'transaction_already_used' });
    expect((await stored(first)).status).toBe('refund_requested');
  });

  it('answers 404 transaction_not_found for a hash the chain does not know', async () => {
    const receipt = await paidReceipt();
    await requestRefund(deps, merchantWallet, { id: receipt.receiptId });
    expect(await refused(verifyRefund(deps, merchantWallet, receipt.receiptId, randomHash()))).toMatchObject({ code: 'transaction_not_found' });
  });

  it('answers unconfirmed until the transaction has the configured confirmations', async () => {
    deps = { ...deps, settings: { ...deps.settings, payments: { ...deps.settings.payments, confirmations: 3 } } };
    const receipt = await paidReceipt();
    const { refund } = await requestRefund(deps, merchantWallet, { id: receipt.receiptId });
    const tx = await send(usdc, refund.to, refund.amount);
    // Other test files mine blocks on this chain too: the head is held two blocks past the transaction's.
    const held = Object.assign(Object.create(chain) as EvmChain, { blockNumber: async () => tx.blockNumber + 1 });
    expect(await verifyRefund({ ...deps, chain: held }, merchantWallet, receipt.receiptId, tx.hash)).toMatchObject({ outcome: 'unconfirmed', status: 'refund_requested' });
    expect((await stored(receipt)).status).toBe('refund_requested');
    await provider.send('anvil_mine', ['0x2']);
    expect(await verifyRefund(deps, merchantWallet, receipt.receiptId, tx.hash)).toMatchObject({ outcome: 'refunded', status: 'refunded' });
  });

  it('answers 409 conflict when no refund is open', async () => {
    const receipt = await paidReceipt();
    const tx = await send(usdc, receipt.buyerWallet!, 1n);
    expect(await refused(verifyRefund(deps, merchantWallet, receipt.receiptId, tx.hash))).toMatchObject({ code: 'conflict' });
  });
});

describe('watchRefunds', () => {
  it('finds a token refund sent with no hash reported, in the range it is given', async () => {
    const receipt = await paidReceipt({ usd: 7.25 });
    const { refund } = await requestRefund(deps, merchantWallet, { id: receipt.receiptId });
    // A transfer too small first, then the refund itself.
    const small = await send(usdc, refund.to, 1n);
    const tx = await send(usdc, refund.to, refund.amount);
    expect(await watchRefunds(deps, { fromBlock: small.blockNumber - 5, toBlock: small.blockNumber })).toEqual({ refunded: [] });
    expect((await stored(receipt)).status).toBe('refund_requested');

    expect(await watchRefunds(deps, { fromBlock: small.blockNumber, toBlock: tx.blockNumber })).toEqual({ refunded: [receipt.receiptId] });
    const after = await stored(receipt);
    expect(after.status).toBe('refunded');
    expect(after.refunds![0]).toMatchObject({ txHash: tx.hash, refundedAt: expect.any(Number) });
    // Nothing open any more: a second scan of the range changes nothing.
    expect(await watchRefunds(deps, { fromBlock: small.blockNumber, toBlock: tx.blockNumber })).toEqual({ refunded: [] });
  });

  it('passes over a transfer an earlier refund of the receipt used', async () => {
    const receipt = await paidReceipt({ usd: 8 });
    const first = (await requestRefund(deps, merchantWallet, { id: receipt.receiptId, amountUsd: 4 })).refund;
    const earlier = await send(usdc, first.to, first.amount);
    expect(await watchRefunds(deps, { fromBlock: earlier.blockNumber, toBlock: earlier.blockNumber })).toEqual({ refunded: [receipt.receiptId] });
    const rest = (await requestRefund(deps, merchantWallet, { id: receipt.receiptId })).refund;
    const tx = await send(usdc, rest.to, rest.amount);
    expect(await watchRefunds(deps, { fromBlock: earlier.blockNumber, toBlock: tx.blockNumber })).toEqual({ refunded: [receipt.receiptId] });
    expect((await stored(receipt)).refunds!.map((refund) => refund.txHash)).toEqual([earlier.hash, tx.hash]);
  });

  it('many stale refunds of one merchant hide no other merchant’s, and a range costs one log query for all', async () => {
    // More open refunds of one merchant, all older, than the watcher looks at in a range.
    const stale = randomAddress();
    const today = now;
    now -= 86_400_000;
    for (let index = 0; index < 250; index++) {
      now += 1;
      const receipt = await paidReceipt({ wallet: stale, usd: 1, payer: randomAddress() });
      await requestRefund(deps, stale, { id: receipt.receiptId });
    }
    now = today;
    const receipt = await paidReceipt({ usd: 6.5 });
    const { refund } = await requestRefund(deps, merchantWallet, { id: receipt.receiptId });
    const tx = await send(usdc, refund.to, refund.amount);
    const getLogs = vi.spyOn(chain.provider, 'getLogs');
    try {
      expect(await watchRefunds(deps, { fromBlock: tx.blockNumber, toBlock: tx.blockNumber })).toEqual({ refunded: [receipt.receiptId] });
      expect(getLogs).toHaveBeenCalledTimes(1);
    } finally {
      getLogs.mockRestore();
    }
    expect(await stored(receipt)).toMatchObject({ status: 'refunded', refunds: [{ txHash: tx.hash }] });
  });

  it('watches at most 20 open refunds of a merchant per range, its newest, and takes the merchants past 200 refunds first on the next range', async () => {
    // 12 merchants with 25 open refunds each: 20 of each are watched, 10 merchants a range.
    const merchants = Array.from({ length: 12 }, randomAddress).sort();
    const payers = new Map<string, string[]>();
    for (const wallet of merchants) {
      for (let index = 0; index < 25; index++) {
        now += 1;
        const receipt = await paidReceipt({ wallet, usd: 1, payer: randomAddress() });
        await requestRefund(deps, wallet, { id: receipt.receiptId });
        payers.set(wallet, [...(payers.get(wallet) ?? []), receipt.buyerWallet!]);
      }
    }
    const asked: { senders: string[]; recipients: string[] }[] = [];
    const counting = {
      chainId: local.chainId,
      transfersAmong: async (senders: readonly string[], recipients: readonly string[]) => {
        asked.push({ senders: [...senders].sort(), recipients: [...recipients] });
        return [];
      },
    } as unknown as Chain;
    for (let range = 1; range <= 3; range++) await watchRefunds({ ...deps, chain: counting }, { fromBlock: range, toBlock: range });

    const sorted = (wallets: string[]) => [...wallets].sort();
    expect(asked.map((call) => call.senders)).toEqual([
      merchants.slice(0, 10),
      sorted([...merchants.slice(10), ...merchants.slice(0, 8)]),
      sorted([...merchants.slice(8), ...merchants.slice(0, 6)]),
    ]);
    // Each merchant's 20 newest refunds (the 5 oldest wait for their hash to be reported).
    expect(asked[0]!.recipients).toHaveLength(200);
    expect(sorted(asked[0]!.recipients.filter((payer) => payers.get(merchants[0]!)!.includes(payer)))).toEqual(sorted(payers.get(merchants[0]!)!.slice(5)));
  });

  it('leaves ETH refunds to a reported hash', async () => {
    const receipt = await paidReceipt({ token: 'ETH', usd: 3, paid: 1_000_000_000_000_000n });
    const { refund } = await requestRefund(deps, merchantWallet, { id: receipt.receiptId });
    const tx = await sendEth(refund.to, refund.amount);
    expect(await watchRefunds(deps, { fromBlock: tx.blockNumber, toBlock: tx.blockNumber })).toEqual({ refunded: [] });
    expect((await verifyRefund(deps, merchantWallet, receipt.receiptId, tx.hash)).outcome).toBe('refunded');
  });
});

describe('the refund routes', () => {
  it('POST /api/receipts/refund and /api/receipts/refund/transaction for the signed-in merchant', async () => {
    const browser = await signInAs(testWallets.other);
    const receipt = await paidReceipt({ usd: 9.99 });
    const asked = await invoke('receipts-refund', { method: 'POST', path: '/api/receipts/refund', headers: browser.headers(), body: { id: receipt.receiptId, amountUsd: 4 } });
    expect(asked).toMatchObject({ status: 200, json: { ok: true, receiptId: receipt.receiptId, status: 'refund_requested', refund: { amount: '4000000', from: merchantWallet } } });
    const refund = asked.json.refund as { to: string; amount: string };
    const tx = await send(usdc, refund.to, refund.amount);
    const reported = await invoke('receipts-refund-report', { method: 'POST', path: '/api/receipts/refund/transaction', headers: browser.headers(), body: { id: receipt.receiptId, txHash: tx.hash } });
    expect(reported).toMatchObject({ status: 200, json: { ok: true, receiptId: receipt.receiptId, status: 'refunded', outcome: 'refunded' } });
    const read = toReceiptView(await stored(receipt), deps.settings.baseUrl);
    expect(read.refundedUsd).toBe(4);

    expect(await invoke('receipts-refund', { method: 'POST', path: '/api/receipts/refund', headers: browser.headers(), body: { id: receipt.receiptId, amountUsd: 6 } })).toMatchObject({ status: 400, json: { error: 'refund_too_large' } });
    expect(await invoke('receipts-refund', { method: 'POST', path: '/api/receipts/refund', headers: browser.headers(), body: { id: receipt.receiptId, amountUsd: 0 } })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'amountUsd' } });
    expect(await invoke('receipts-refund-report', { method: 'POST', path: '/api/receipts/refund/transaction', headers: browser.headers(), body: { id: receipt.receiptId, txHash: 'nope' } })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'txHash' } });
    // Another merchant's session does not see the receipt.
    const other = await signInAs(testWallets.merchant);
    expect(await invoke('receipts-refund', { method: 'POST', path: '/api/receipts/refund', headers: other.headers(), body: { id: receipt.receiptId } })).toMatchObject({ status: 404, json: { error: 'not_found' } });
  });

  it('answer 401 without a session', async () => {
    expect(await invoke('receipts-refund', { method: 'POST', path: '/api/receipts/refund', body: { id: 'R-X' } })).toMatchObject({ status: 401 });
  });
});
