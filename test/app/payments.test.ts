import { randomBytes } from 'node:crypto';
import { Contract, NonceManager, Wallet, parseEther, zeroPadValue, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ChainUnavailableError, EvmChain } from '../../shared/adapters/evm/chain';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { AppDeps } from '../../shared/app/deps';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { createOrder } from '../../shared/app/orders';
import { getPortalView, quoteFor, recordPortalEvent } from '../../shared/app/payments/portal';
import { claimPayment } from '../../shared/app/payments/ledger';
import { MAX_FOREIGN_REVERTS, MAX_PAYMENT_RECORDS, verifyPayment } from '../../shared/app/payments/verify';
import { watchPayments } from '../../shared/app/payments/watcher';
import { openDeposits } from '../../shared/app/payments/deposits';
import { depositShardId, type DepositWatch } from '../../shared/domain/payment';
import { expireReceipts } from '../../shared/app/payments/expiry';
import { commitPendingStock } from '../../shared/app/payments/stock';
import { createReceipt } from '../../shared/app/receipts';
import { InventoryUpsertInput } from '../../shared/domain/inventory';
import { chainWithOwnFeed, merchantWithSplit, payingSettings, testAccounts } from '../support/chain-merchant';
import { allStores } from '../support/stores';

/**
 * Payments end to end below HTTP: quotes, verification and the watcher with every store adapter, on
 * the run's anvil chain through the real EVM adapter. Each store gets its own merchant, split and
 * feed, and sends from fresh wallets, so nothing here races the other test files' accounts.
 */
const chainInfo = inject('chain');
let provider: JsonRpcProvider;
let accounts: Awaited<ReturnType<typeof testAccounts>>;

const erc20 = (address: string, signer: Wallet | NonceManager) => new Contract(address, testUsdcArtifact.abi, signer);

/** A fresh wallet with ETH for gas and 10,000 of each test token. */
const newWallet = () => accounts.newWallet([chainInfo.usdc, chainInfo.usdt]);

beforeAll(async () => {
  provider = createProvider(chainInfo.rpcUrl, chainInfo.chainId);
  accounts = await testAccounts(provider);
});
afterAll(() => provider.destroy());


/**
 * A reported hash, asked again while the node answers it pending: anvil, like a load-balanced
 * provider, can miss a transaction for a moment after another connection saw it mined (the page asks
 * again the same way).
 */
const verified = async (...args: Parameters<typeof verifyPayment>) => {
  for (let attempt = 1; ; attempt++) {
    const answer = await verifyPayment(...args);
    if (answer.outcome !== 'pending' || attempt === 20) return answer;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

describe.each(allStores)('payments on $name', (store) => {
  let deps: AppDeps;
  let chain: EvmChain;
  let feed: Contract;
  let merchant: string;
  let split: string;
  const now = Date.now();

  const setPrice = async (usd: number) => (await feed.getFunction('setAnswer')(BigInt(Math.round(usd * 1e8)))).wait();

  beforeAll(async () => {
    ({ chain, feed } = await chainWithOwnFeed(newWallet));
    const base = await store.make({ chain });
    const settings = payingSettings(base.settings, (await feed.getAddress()).toLowerCase());
    deps = { ...base, settings: { ...settings, payments: { ...settings.payments, explorerUrl: 'https://explorer.example' } } };
    ({ merchant, split } = await merchantWithSplit(deps, chain));
  });
  afterAll(() => chain.destroy());

  let serial = 0;
  const newReceipt = async (totalUsd = 52.02, using: AppDeps = deps) => {
    const id = `pay-${store.name}-${++serial}-${Date.now()}`;
    await createReceipt(using, { wallet: merchant, subscriptionId: null }, { id, lineItems: [{ label: 'Beans', priceUsd: totalUsd }], totalUsd });
    return id;
  };
  const receiptOf = async (id: string) => (await deps.receipts.get(merchant, id))!.value;

  /**
   * Quotes whose one-second lock ended seconds before the buyer pays, whatever the chain's clock: they
   * are made by a clock 10 s behind (a sleep past the lock is not enough when the chain runs behind ours).
   */
  const lapsed = (): AppDeps => ({
    ...deps,
    settings: { ...deps.settings, payments: { ...deps.settings.payments, quoteLockMs: 1_000 } },
    clock: { now: () => Date.now() - 10_000 },
  });

  /**
   * A USDC transfer (to the quote's address, by default) from a wallet that holds none: mined, and
   * reverted (a fixed gas limit, so it is not refused). `connectTo`: the page connected that wallet for this receipt first.
   */
  const revertedPayment = async (quote: { amount: string; payTo: string }, options: { to?: string; connectTo?: { id: string; deps?: AppDeps } } = {}) => {
    const poor = new Wallet(Wallet.createRandom().privateKey, provider);
    await provider.send('anvil_setBalance', [poor.address, '0x' + parseEther('1').toString(16)]);
    if (options.connectTo) await recordPortalEvent(options.connectTo.deps ?? deps, options.connectTo.id, { status: 'buyer_logged_in', wallet: poor.address.toLowerCase() });
    const tx = await erc20(chainInfo.usdc, poor).getFunction('transfer')(options.to ?? quote.payTo, BigInt(quote.amount), { gasLimit: 100_000 });
    await tx.wait().catch(() => undefined);
    return tx.hash as string;
  };
  const page = { reporter: 'page' } as const;

  /** Pays a quote the way a wallet would: an ERC-20 transfer, or ETH sent to the receipt's deposit address. */
  const pay = async (buyer: Wallet, quote: { token: string; tokenAddress: string | null; payTo: string; amount: string }, amount = BigInt(quote.amount)) => {
    const tx = quote.tokenAddress
      ? await erc20(quote.tokenAddress, buyer).getFunction('transfer')(quote.payTo, amount)
      : await buyer.sendTransaction({ to: quote.payTo, value: amount });
    await tx.wait();
    return tx.hash as string;
  };

  it.each(['USDC', 'USDT', 'ETH'] as const)('a %s payment reported by hash makes the receipt paid, with its facts', async (token) => {
    const id = await newReceipt();
    const buyer = await newWallet();
    const quote = await quoteFor(deps, id, token);
    // The receipt's own address, as the factory derives it from the shop's split and the receipt; never the split.
    const deposit = (await chain.depositAddress(split, merchant, id))!;
    expect(deposit).not.toBe(split);
    expect(quote).toMatchObject({ token, payTo: deposit, chainId: chainInfo.chainId });
    expect((await receiptOf(id)).deposit).toEqual({ address: deposit, split });
    // Exactly the customer total (fee included) in token units: nothing added below the cent.
    if (token !== 'ETH') expect(quote.amount).toBe(String(Math.round((await receiptOf(id)).customerTotalUsd * 100) * 10_000));
    expect(quote.uri).toContain(token === 'ETH' ? `ethereum:${deposit}@${chainInfo.chainId}?value=${quote.amount}` : `/transfer?address=${deposit}&uint256=${quote.amount}`);
    // The same token again, within the lock: the same quote.
    expect((await quoteFor(deps, id, token)).quoteId).toBe(quote.quoteId);
    const hash = await pay(buyer, quote);
    const answer = await verified(deps, id, hash);
    expect(answer).toMatchObject({ outcome: 'paid', status: 'paid', received: quote.amount });
    const receipt = await receiptOf(id);
    expect(receipt).toMatchObject({ status: 'paid', transactionHash: hash, buyerWallet: buyer.address.toLowerCase(), token, amountPaid: quote.amount, amountOverpaid: null });
    expect(receipt.paidAt).toBeGreaterThan(0);
    const view = await getPortalView(deps, id);
    expect(view.payment).toMatchObject({ transactionHash: hash, explorerUrl: `https://explorer.example/tx/${hash}` });
    expect(view.payable).toBe(false);
    // Reported again: already recorded, nothing changes.
    expect(await verified(deps, id, hash)).toMatchObject({ outcome: 'already_recorded', recorded: 'paid', status: 'paid' });
    await expect(quoteFor(deps, id, token)).rejects.toMatchObject({ code: 'receipt_not_payable' });
  });

  it('a payment made at once is paid though the chain’s clock runs seconds behind ours (a node started under load, a block stamped at its slot’s start)', async () => {
    // The receipt and its quote are made by a clock 3 s ahead of the chain's; the buyer pays at once.
    const ahead = { ...deps, clock: { now: () => Date.now() + 3_000 } };
    const id = await newReceipt(52.02, ahead);
    const quote = await quoteFor(ahead, id, 'USDC');
    const hash = await pay(await newWallet(), quote);
    expect(await verified(ahead, id, hash)).toMatchObject({ outcome: 'paid', status: 'paid' });
    const unpaid = await newReceipt(52.02, ahead);
    const reverted = await revertedPayment(await quoteFor(ahead, unpaid, 'USDC'), { connectTo: { id: unpaid, deps: ahead } });
    expect(await verified(ahead, unpaid, reverted, page)).toMatchObject({ outcome: 'reverted', status: 'failed' });
  });

  it('one transaction reported twice at once (the page and the watcher together) is one payment: never answered overpaid', async () => {
    const id = await newReceipt();
    const quote = await quoteFor(deps, id, 'USDC');
    const hash = await pay(await newWallet(), quote);
    const answers = await Promise.all([verified(deps, id, hash), verified(deps, id, hash), verified(deps, id, hash)]);
    for (const answer of answers) expect(answer.outcome === 'already_recorded' ? answer.recorded : answer.outcome).toBe('paid');
    expect(answers.filter((answer) => answer.outcome === 'paid')).toHaveLength(1);
    expect((await receiptOf(id)).payments!.map((record) => [record.txHash, record.outcome])).toEqual([[hash.toLowerCase(), 'paid']]);
  });

  it('two receipts of one total are asked the same exact amount at addresses of their own, and a plain transfer is matched by the watcher', async () => {
    const [a, b] = [await newReceipt(19.99), await newReceipt(19.99)];
    const [qa, qb] = [await quoteFor(deps, a, 'USDC'), await quoteFor(deps, b, 'USDC')];
    expect(qa.amount).toBe(qb.amount);
    expect(BigInt(qa.amount) % 10_000n).toBe(0n);
    expect(qa.payTo).not.toBe(qb.payTo);
    await watchPayments(deps); // move the cursor to the head
    const hash = await pay(await newWallet(), qb);
    const report = await watchPayments(deps);
    expect(report.matched).toBeGreaterThanOrEqual(1);
    expect(await receiptOf(b)).toMatchObject({ status: 'paid', transactionHash: hash });
    expect((await receiptOf(a)).status).toBe('pending');
  });

  it('the watcher finds the payments among 2,500 open deposit addresses (the log queries split by 1,000)', async () => {
    // Other shops' open receipts: addresses on the list that nothing pays.
    const until = Date.now() + 3_600_000;
    const shards = new Map<string, Record<string, DepositWatch>>();
    for (let n = 0; n < 2_500; n++) {
      const address = `0x${randomBytes(20).toString('hex')}`;
      const id = depositShardId(chainInfo.chainId, address);
      shards.set(id, { ...shards.get(id), [address]: { owner: `${merchant}:elsewhere-${n}`, split, until } });
    }
    for (const [id, deposits] of shards) {
      const stored = await deps.chainState.get(id, id);
      const value = { id, deposits: { ...stored?.value.deposits, ...deposits }, updatedAt: Date.now() };
      await (stored ? deps.chainState.replace(id, value, stored.etag) : deps.chainState.create(id, value));
    }
    const ids = [await newReceipt(3), await newReceipt(4), await newReceipt(5)];
    const quotes = await Promise.all(ids.map((id) => quoteFor(deps, id, 'USDC')));
    expect((await openDeposits(deps)).size).toBeGreaterThanOrEqual(2_503);
    await watchPayments(deps);
    const payer = await newWallet();
    await pay(payer, quotes[0]!);
    await pay(payer, quotes[1]!);
    await pay(payer, quotes[2]!);
    const report = await watchPayments(deps);
    expect(report.matched).toBeGreaterThanOrEqual(3);
    for (const id of ids) expect((await receiptOf(id)).status).toBe('paid');
  });

  it('the watcher finds ETH sent to a deposit address by a plain transaction (no log): by the address’s balance, then the transaction', async () => {
    const id = await newReceipt(12);
    const quote = await quoteFor(deps, id, 'ETH');
    await watchPayments(deps);
    const hash = await pay(await newWallet(), quote);
    await watchPayments(deps);
    expect(await receiptOf(id)).toMatchObject({ status: 'paid', transactionHash: hash, token: 'ETH', amountPaid: quote.amount });
  });

  it('ETH a contract wallet sends on (no log, no transaction to the address) is credited from the address’s balance: paid, its sender unknown', async () => {
    const id = await newReceipt(9);
    const quote = await quoteFor(deps, id, 'ETH');
    await watchPayments(deps);
    // A contract that sends its call's value on to the address in its calldata: an internal transfer, as a smart wallet makes.
    const sender = await newWallet();
    const runtime = '6000600060006000346000355af100';
    const deployed = await (await sender.sendTransaction({ data: `0x600f600c600039600f6000f3${runtime}` })).wait();
    const relay = deployed!.contractAddress!;
    const sent = await (await sender.sendTransaction({ to: relay, value: BigInt(quote.amount), data: zeroPadValue(quote.payTo, 32) })).wait();
    expect(await provider.getBalance(quote.payTo)).toBe(BigInt(quote.amount));
    await watchPayments(deps);
    const receipt = await receiptOf(id);
    expect(receipt).toMatchObject({ status: 'paid', token: 'ETH', amountPaid: quote.amount, transactionHash: null, buyerWallet: null });
    expect(receipt.payments).toEqual([expect.objectContaining({ txHash: `balance:${quote.payTo}:${sent!.blockNumber}`, payer: null, amount: quote.amount, outcome: 'paid' })]);
    expect((await getPortalView(deps, id)).payment).toMatchObject({ transactionHash: null, amount: quote.amount, explorerUrl: null });
    // The range read again, cut otherwise (the cursor set back past the block, then a block more): one credit.
    await (await sender.sendTransaction({ to: sender.address, value: 1n })).wait();
    const cursor = (await deps.chainState.get(`cursor:${chainInfo.chainId}`, `cursor:${chainInfo.chainId}`))!;
    await deps.chainState.replace(cursor.value.id, { ...cursor.value, nextBlock: sent!.blockNumber - 1 }, cursor.etag);
    await watchPayments(deps);
    expect((await receiptOf(id)).payments).toHaveLength(1);
  });

  it('underpaid, then topped up by another wallet, late: the sum pays it, each transfer recorded with its sender, and the refund stays the first payer’s', async () => {
    const id = await newReceipt(20);
    const quote = await quoteFor(lapsed(), id, 'USDC');
    const [buyer, friend] = [await newWallet(), await newWallet()];
    const first = await pay(buyer, quote, BigInt(quote.amount) - 5_000_000n);
    expect(await verified(deps, id, first)).toMatchObject({ outcome: 'underpaid', status: 'pending' });
    // After the lock, from another wallet, an amount no quote carries (an exchange's withdrawal less its fee).
    const second = await pay(friend, quote, 5_500_000n);
    await watchPayments(deps);
    const receipt = await receiptOf(id);
    expect(receipt).toMatchObject({ status: 'paid', buyerWallet: buyer.address.toLowerCase(), amountPaid: String(BigInt(quote.amount) + 500_000n), amountOverpaid: '500000' });
    expect(receipt.payments!.map((record) => [record.txHash, record.payer, record.amount, record.outcome])).toEqual([
      [first.toLowerCase(), buyer.address.toLowerCase(), String(BigInt(quote.amount) - 5_000_000n), 'underpaid'],
      [second.toLowerCase(), friend.address.toLowerCase(), '5500000', 'overpaid'],
    ]);
    // A transfer after it is paid is recorded on it too (for the merchant to refund), found by the watcher.
    const extra = await pay(friend, quote, 1_000_000n);
    await watchPayments(deps);
    expect((await receiptOf(id)).payments!.at(-1)).toMatchObject({ txHash: extra.toLowerCase(), outcome: 'overpaid', amount: '1000000' });
  });

  it('a stranger’s reverted transfer to the address, or one reported by anyone but the page, changes nothing but a record', async () => {
    const id = await newReceipt();
    const quote = await quoteFor(deps, id, 'USDC');
    // An empty wallet's transfer(deposit, amount): anyone who knows the receipt can send it.
    const stranger = await revertedPayment(quote);
    expect(await verified(deps, id, stranger, page)).toMatchObject({ outcome: 'reverted', status: 'pending' });
    // The connected wallet's own reverted transaction reported by someone other than the page (a script calling the API as a merchant would): no failure either.
    const own = await revertedPayment(quote, { connectTo: { id } });
    expect(await verified(deps, id, own)).toMatchObject({ outcome: 'reverted', status: 'buyer_logged_in' });
    const receipt = await receiptOf(id);
    expect(receipt.failure ?? null).toBeNull();
    expect(receipt.payments!.map((record) => [record.txHash, record.outcome])).toEqual([
      [stranger.toLowerCase(), 'reverted'],
      [own.toLowerCase(), 'reverted'],
    ]);
    expect((await getPortalView(deps, id)).payable).toBe(true);
  });

  it('less than a cent’s worth is dust: not counted, not recorded, passed by the watcher', async () => {
    const id = await newReceipt(10);
    const quote = await quoteFor(deps, id, 'USDC');
    await watchPayments(deps);
    const dust = await pay(await newWallet(), quote, 9_999n);
    await expect(verified(deps, id, dust)).rejects.toMatchObject({ code: 'not_a_payment' });
    await watchPayments(deps);
    expect((await receiptOf(id)).payments ?? []).toEqual([]);
    // A cent is no dust.
    expect(await verified(deps, id, await pay(await newWallet(), quote, 10_000n))).toMatchObject({ outcome: 'underpaid', received: '10000' });
  });

  it.runIf(store.name === 'memory')('a receipt records a bounded number of transfers, yet the one that completes the sum always pays it', async () => {
    const id = await newReceipt(10);
    const quote = await quoteFor(deps, id, 'USDC');
    const deposit = quote.payTo;
    const block = await provider.getBlockNumber();
    const stranger = Wallet.createRandom().address.toLowerCase();
    // Transactions the stand-in chain makes up: a stranger's reverted transfers and one-cent transfers, as cheap as gas on a rollup.
    let serial = 0;
    const made = new Map<string, Awaited<ReturnType<EvmChain['transaction']>>>();
    const fake = (status: 0 | 1, amount: bigint) => {
      const hash = `0x${(++serial).toString(16).padStart(64, '0')}`;
      made.set(hash, { hash, status, from: stranger, to: chainInfo.usdc.toLowerCase(), data: `0xa9059cbb${deposit.slice(2).padStart(64, '0')}${amount.toString(16).padStart(64, '0')}`, blockNumber: block, blockTimestamp: Math.floor(Date.now() / 1000), moves: status === 1 ? [{ token: chainInfo.usdc.toLowerCase(), from: stranger, to: deposit, amount: amount.toString(), logIndex: 0 }] : [] });
      return hash;
    };
    const standIn = { ...deps, chain: Object.assign(Object.create(chain) as EvmChain, { transaction: async (hash: string) => made.get(hash) }) };
    for (let n = 0; n < MAX_FOREIGN_REVERTS + 5; n++) expect(await verified(standIn, id, fake(0, 1n), page)).toMatchObject({ outcome: 'reverted', status: 'pending' });
    expect((await receiptOf(id)).payments).toHaveLength(MAX_FOREIGN_REVERTS);
    for (let n = (await receiptOf(id)).payments!.length; n < MAX_PAYMENT_RECORDS; n++) await verified(standIn, id, fake(1, 10_000n));
    expect((await receiptOf(id)).payments).toHaveLength(MAX_PAYMENT_RECORDS);
    await expect(verified(standIn, id, fake(1, 10_000n))).rejects.toMatchObject({ code: 'not_a_payment' });
    // What the cents added up to, and the rest in one transfer: paid.
    const cents = BigInt(MAX_PAYMENT_RECORDS - MAX_FOREIGN_REVERTS) * 10_000n;
    expect(await verified(standIn, id, fake(1, BigInt(quote.amount) - cents))).toMatchObject({ outcome: 'paid', status: 'paid', received: quote.amount });
  });

  it('1 wei, or a short amount, of ETH from a stranger after an ETH quote’s lock fails nothing: dust, then an underpayment on record', async () => {
    const id = await newReceipt(30);
    const quote = await quoteFor(lapsed(), id, 'ETH');
    const dust = await pay(await newWallet(), quote, 1n);
    await expect(verified(deps, id, dust, page)).rejects.toMatchObject({ code: 'not_a_payment' });
    const half = BigInt(quote.amount) / 2n;
    expect(await verified(deps, id, await pay(await newWallet(), quote, half), page)).toMatchObject({ outcome: 'underpaid', status: 'pending', received: half.toString() });
    expect((await receiptOf(id)).failure ?? null).toBeNull();
    expect(await verified(deps, id, await pay(await newWallet(), quote, BigInt(quote.amount) - half))).toMatchObject({ outcome: 'paid', status: 'paid' });
  });

  it('an underpayment leaves the receipt unpaid and records it; the rest paid later makes it paid', async () => {
    const id = await newReceipt();
    const buyer = await newWallet();
    const quote = await quoteFor(deps, id, 'USDT');
    const short = BigInt(quote.amount) - 1_000_000n;
    const first = await pay(buyer, quote, short);
    expect(await verified(deps, id, first)).toMatchObject({ outcome: 'underpaid', status: 'pending', received: short.toString(), expected: quote.amount });
    // Reported again (or after the watcher recorded it): what it was judged then.
    expect(await verified(deps, id, first)).toMatchObject({ outcome: 'already_recorded', recorded: 'underpaid', status: 'pending', received: short.toString(), expected: quote.amount });
    expect((await getPortalView(deps, id)).underpaid).toEqual({ token: 'USDT', received: short.toString(), expected: quote.amount });
    const second = await pay(buyer, quote, 1_000_000n);
    expect(await verified(deps, id, second)).toMatchObject({ outcome: 'paid', status: 'paid' });
    expect((await receiptOf(id)).payments!.map((record) => record.outcome)).toEqual(['underpaid', 'paid']);
  });

  it('underpayments add up once each: three short transfers are what they are, and the rest makes it paid', async () => {
    const id = await newReceipt(100);
    const buyer = await newWallet();
    const quote = await quoteFor(deps, id, 'USDC');
    const part = (BigInt(quote.amount) * 40n) / 100n;
    const sent = [part, part, 10_000n];
    for (const amount of sent) expect(await verified(deps, id, await pay(buyer, quote, amount))).toMatchObject({ outcome: 'underpaid' });
    const receipt = await receiptOf(id);
    expect(receipt.status).toBe('pending');
    expect(receipt.payments!.map((record) => record.amount)).toEqual(sent.map(String));
    const rest = BigInt(quote.amount) - part - part - 10_000n;
    expect(await verified(deps, id, await pay(buyer, quote, rest))).toMatchObject({ outcome: 'paid', received: quote.amount });
    expect((await receiptOf(id)).amountPaid).toBe(quote.amount);
  });

  it('two underpayments that together cover the receipt, verified at the same time, make it paid: the sum is decided under its ETag', async () => {
    for (let round = 0; round < 3; round++) {
      const id = await newReceipt(10);
      const quote = await quoteFor(deps, id, 'USDC');
      const half = BigInt(quote.amount) / 2n;
      const [first, second] = [await pay(await newWallet(), quote, half), await pay(await newWallet(), quote, BigInt(quote.amount) - half)];
      const answers = await Promise.all([verified(deps, id, first), verified(deps, id, second)]);
      expect(answers.map((answer) => answer.outcome).sort()).toEqual(['paid', 'underpaid']);
      const receipt = await receiptOf(id);
      expect(receipt).toMatchObject({ status: 'paid', amountPaid: quote.amount });
      expect(receipt.payments!.map((record) => record.amount).sort()).toEqual([half.toString(), (BigInt(quote.amount) - half).toString()].sort());
    }
  });

  it('an x402 settlement’s transaction pays its own order only: reported for another receipt of the shop, transaction_already_used', async () => {
    const id = await newReceipt(5);
    const quote = await quoteFor(deps, id, 'USDC');
    // The settlement's transfer carries the receipt's amount, as a transfer to the split would; the gate claimed it for its order.
    const hash = await pay(await newWallet(), quote);
    await claimPayment(deps, chainInfo.chainId, hash, `${merchant}:x402-order`);
    await expect(verified(deps, id, hash)).rejects.toMatchObject({ code: 'transaction_already_used' });
    expect(await receiptOf(id)).toMatchObject({ status: 'pending' });
    expect((await receiptOf(id)).payments ?? []).toEqual([]);
  });

  it('one transaction carrying two payments (a batch withdrawal) pays both receipts: the ledger claims transfers, not transactions', async () => {
    const [first, second] = [await newReceipt(7), await newReceipt(8)];
    const [quoteA, quoteB] = [await quoteFor(deps, first, 'USDC'), await quoteFor(deps, second, 'USDC')];
    // An exchange's batch: one transaction, a transfer of each quoted amount into the split.
    const exchange = Wallet.createRandom().address.toLowerCase();
    const batch = {
      hash: `0x${randomBytes(32).toString('hex')}`,
      status: 1 as const,
      from: exchange,
      to: Wallet.createRandom().address.toLowerCase(),
      data: '0x',
      blockNumber: await provider.getBlockNumber(),
      blockTimestamp: Math.floor(Date.now() / 1000),
      moves: [
        { token: chainInfo.usdc.toLowerCase(), from: exchange, to: quoteA.payTo, amount: quoteA.amount, logIndex: 2 },
        { token: chainInfo.usdc.toLowerCase(), from: exchange, to: quoteB.payTo, amount: quoteB.amount, logIndex: 4 },
      ],
    };
    const batched = { ...deps, chain: Object.assign(Object.create(chain) as EvmChain, { transaction: async () => batch }) };
    expect(await verified(batched, second, batch.hash)).toMatchObject({ outcome: 'paid', status: 'paid', received: quoteB.amount });
    expect(await verified(batched, first, batch.hash)).toMatchObject({ outcome: 'paid', status: 'paid', received: quoteA.amount });
    // A transfer pays where it went: a third receipt reporting the batch finds nothing of its own.
    const third = await newReceipt(7);
    await quoteFor(deps, third, 'USDC');
    await expect(verified(batched, third, batch.hash)).rejects.toMatchObject({ code: 'not_a_payment' });
  });

  it('a transfer of another receipt’s quoted amount cannot be claimed by a receipt that learns its hash', async () => {
    const [victim, thief] = [await newReceipt(100), await newReceipt(5)];
    const quote = await quoteFor(deps, victim, 'USDC');
    await quoteFor(deps, thief, 'USDC');
    const hash = await pay(await newWallet(), quote); // from the QR code: nobody reports it
    await expect(verified(deps, thief, hash)).rejects.toMatchObject({ code: 'not_a_payment' });
    expect((await receiptOf(thief)).payments ?? []).toEqual([]);
    expect(await verified(deps, victim, hash)).toMatchObject({ outcome: 'paid', status: 'paid' });
  });

  it('a stranger’s failed token call cannot fail a receipt', async () => {
    const id = await newReceipt();
    await quoteFor(deps, id, 'USDC');
    // A failed USDC transfer to someone else.
    const hash = await revertedPayment({ amount: '1000000', payTo: Wallet.createRandom().address }, { connectTo: { id } });
    await expect(verified(deps, id, hash, page)).rejects.toMatchObject({ code: 'not_a_payment' });
    expect((await receiptOf(id)).status).toBe('buyer_logged_in');
  });

  it('a late ETH payment is not decided while the feed cannot be read', async () => {
    const id = await newReceipt(30);
    const quote = await quoteFor(lapsed(), id, 'ETH');
    const hash = await pay(await newWallet(), quote);
    const feedDown = Object.assign(Object.create(chain) as EvmChain, { ethUsdPrice: () => Promise.reject(new ChainUnavailableError()) });
    await expect(verified({ ...deps, chain: feedDown }, id, hash)).rejects.toBeInstanceOf(ChainUnavailableError);
    expect((await receiptOf(id)).payments ?? []).toEqual([]);
    expect(await verified(deps, id, hash)).toMatchObject({ status: 'paid' });
  });

  it('a USDC payment of a receipt whose ETH quote lapsed is decided while the feed cannot be read: only ETH needs the price', async () => {
    const id = await newReceipt(30);
    await quoteFor(lapsed(), id, 'ETH');
    const quote = await quoteFor(deps, id, 'USDC');
    const hash = await pay(await newWallet(), quote);
    const feedDown = Object.assign(Object.create(chain) as EvmChain, { ethUsdPrice: () => Promise.reject(new ChainUnavailableError()) });
    expect(await verified({ ...deps, chain: feedDown }, id, hash)).toMatchObject({ outcome: 'paid', status: 'paid' });
  });

  it('the watcher does not pass a transfer whose transaction its node does not know yet', async () => {
    const id = await newReceipt();
    const quote = await quoteFor(deps, id, 'USDC');
    await watchPayments(deps);
    const hash = await pay(await newWallet(), quote);
    const behind = Object.assign(Object.create(chain) as EvmChain, { transaction: () => Promise.resolve(undefined) });
    await expect(watchPayments({ ...deps, chain: behind })).rejects.toMatchObject({ code: 'transaction_not_found' });
    expect((await receiptOf(id)).status).toBe('pending');
    await watchPayments(deps);
    expect(await receiptOf(id)).toMatchObject({ status: 'paid', transactionHash: hash });
  });

  it('an expired receipt stays expired when the page reports a tracking status', async () => {
    const id = await newReceipt();
    // A day (the expiry) later.
    const later = { ...deps, clock: { now: () => Date.now() + deps.settings.payments.receiptExpiryMs + 1_000 } };
    await expireReceipts(later);
    expect((await receiptOf(id)).failure?.failureCode).toBe('PORTAL_SESSION_EXPIRED');
    expect(await recordPortalEvent(later, id, { status: 'link_opened' })).toMatchObject({ ignored: true, status: 'failed' });
    await expect(quoteFor(later, id, 'USDC')).rejects.toMatchObject({ code: 'receipt_not_payable' });
  });

  it('the stock sweep finds a paid receipt whose commit was cut short, however many are done', async () => {
    const sku = `SWEEP-${store.name}-${Date.now()}`;
    await upsertInventoryItem(deps, merchant, InventoryUpsertInput.parse({ sku, name: 'Swept', priceUsd: 2, stockQty: 3 }));
    const { receipt } = await createOrder(deps, { wallet: merchant, subscriptionId: null }, { items: [{ sku, qty: 2 }] });
    const stored = (await deps.receipts.get(merchant, receipt.receiptId))!;
    // Paid ten minutes ago, and the process stopped before the stock was taken.
    await deps.receipts.replace(merchant, { ...stored.value, status: 'paid', paidAt: Date.now() - 10 * 60_000, stock: null }, stored.etag);
    expect(await commitPendingStock(deps, 5)).toBeGreaterThanOrEqual(1);
    expect((await deps.inventory.findBySku(merchant, sku))!.value.stockQty).toBe(1);
    expect((await receiptOf(receipt.receiptId)).stock).toMatchObject({ shortfall: [] });
    expect(await commitPendingStock(deps, 5)).toBe(0);
  });

  it('a transfer pays the receipt whose address it went to, whoever reports it first and for whichever receipt', async () => {
    const [first, second] = [await newReceipt(), await newReceipt()];
    const quote = await quoteFor(deps, first, 'USDC');
    await quoteFor(deps, second, 'USDC');
    // A round amount no quote carries (an overpayment), reported for the other receipt first (an attacker watching the chain).
    const hash = await pay(await newWallet(), quote, BigInt(quote.amount) + 1_000_000n);
    await expect(verified(deps, second, hash)).rejects.toMatchObject({ code: 'not_a_payment' });
    expect(await verified(deps, first, hash)).toMatchObject({ outcome: 'overpaid', status: 'paid' });
    await expect(verified(deps, second, hash)).rejects.toMatchObject({ code: 'not_a_payment' });
    expect((await receiptOf(second)).status).toBe('pending');
    expect((await receiptOf(second)).payments ?? []).toEqual([]);
  });

  it('a reverted payment fails the receipt with PORTAL_CHAIN_TX_REVERTED, and the buyer may pay again', async () => {
    const id = await newReceipt();
    const quote = await quoteFor(deps, id, 'USDC');
    expect(await verified(deps, id, await revertedPayment(quote, { connectTo: { id } }), page)).toMatchObject({ outcome: 'reverted', status: 'failed' });
    const receipt = await receiptOf(id);
    expect(receipt.failure).toMatchObject({ failureCode: 'PORTAL_CHAIN_TX_REVERTED', failureCategory: 'blockchain' });
    expect((await getPortalView(deps, id)).payable).toBe(true);
    const hash = await pay(await newWallet(), quote);
    expect(await verified(deps, id, hash)).toMatchObject({ outcome: 'paid', status: 'paid' });
  });

  it('refuses what is not a payment of this receipt and changes nothing', async () => {
    const id = await newReceipt();
    const quote = await quoteFor(deps, id, 'USDC');
    const buyer = await newWallet();
    const elsewhere = await pay(buyer, { ...quote, payTo: Wallet.createRandom().address.toLowerCase() });
    await expect(verified(deps, id, elsewhere)).rejects.toMatchObject({ code: 'not_a_payment' });
    await expect(verified(deps, id, '0x' + 'ab'.repeat(32))).rejects.toMatchObject({ code: 'transaction_not_found' });
    await expect(verified(deps, 'no-such-receipt', elsewhere)).rejects.toMatchObject({ code: 'not_found' });
    await expect(verified(deps, '../../etc', elsewhere)).rejects.toMatchObject({ code: 'not_found' });
    const receipt = await receiptOf(id);
    expect(receipt.status).toBe('pending');
    expect(receipt.payments ?? []).toEqual([]);
  });

  it('ETH after the lock: at least the quote, less only within the tolerance of a fallen price, failed beyond it', async () => {
    try {
      const [short, dearer, within, beyond] = [await newReceipt(30), await newReceipt(30), await newReceipt(30), await newReceipt(30)];
      const [q1, q2, q3, q4] = [await quoteFor(lapsed(), short, 'ETH'), await quoteFor(lapsed(), dearer, 'ETH'), await quoteFor(lapsed(), within, 'ETH'), await quoteFor(lapsed(), beyond, 'ETH')];
      const buyer = await newWallet();
      // The page connected the buyer's wallet and reports its payments: a shortfall is the buyer's own slippage.
      for (const id of [short, dearer, within, beyond]) await recordPortalEvent(deps, id, { status: 'buyer_logged_in', wallet: buyer.address.toLowerCase() });
      // The price unchanged: the tolerance is no discount, so 0.5 % under the quote is slippage.
      const under = (BigInt(q1.amount) * 995n) / 1000n;
      expect(await verified(deps, short, await pay(buyer, q1, under), page)).toMatchObject({ outcome: 'slippage', status: 'failed', expected: q1.amount });
      await setPrice(3_010); // 0.33 % dearer: fewer wei would do now, but the quote is what is owed
      expect(await verified(deps, dearer, await pay(buyer, q2))).toMatchObject({ outcome: 'paid', status: 'paid', expected: q2.amount });
      await setPrice(2_990); // 0.33 % cheaper: the quoted wei is short of the amount now, within the 1 %
      const paid = await verified(deps, within, await pay(buyer, q3));
      expect(paid).toMatchObject({ outcome: 'paid', status: 'paid' });
      expect(BigInt((paid as { expected: string }).expected) > BigInt(q3.amount)).toBe(true);
      await setPrice(2_900); // 3.3 % cheaper: the quoted wei no longer covers it
      expect(await verified(deps, beyond, await pay(buyer, q4), page)).toMatchObject({ outcome: 'slippage', status: 'failed' });
      expect((await receiptOf(beyond)).failure?.failureCode).toBe('PORTAL_CHAIN_SLIPPAGE_EXCEEDED');
    } finally {
      await setPrice(3_000);
    }
  });

  it('refuses quotes it cannot honour: stale feed, unknown token, no split', async () => {
    const id = await newReceipt();
    await (await feed.getFunction('setUpdatedAt')(BigInt(Math.floor(Date.now() / 1000) - 7_200))).wait();
    await expect(quoteFor(deps, id, 'ETH')).rejects.toMatchObject({ code: 'price_stale' });
    // A fresh answer at the aggregator's bound (the mock's minAnswer and maxAnswer) is no price either.
    for (const bound of [1n, 100_000_000_000_000n]) {
      await (await feed.getFunction('setAnswer')(bound)).wait();
      await expect(quoteFor(deps, id, 'ETH')).rejects.toMatchObject({ code: 'price_stale' });
    }
    await setPrice(3_000);
    const usdcOnly = { ...deps, settings: { ...deps.settings, tokens: deps.settings.tokens.filter((t) => t.symbol === 'USDC') } };
    await expect(quoteFor(usdcOnly, id, 'USDT')).rejects.toMatchObject({ code: 'unsupported_token' });
    const noSplit = Wallet.createRandom().address.toLowerCase();
    const unpayable = `nosplit-${store.name}-${Date.now()}`;
    await createReceipt(deps, { wallet: noSplit, subscriptionId: null }, { id: unpayable, lineItems: [{ label: 'x', priceUsd: 1 }], totalUsd: 1 });
    expect(await getPortalView(deps, unpayable)).toMatchObject({ payable: false, notPayableReason: 'split_required', quote: null });
    await expect(quoteFor(deps, unpayable, 'USDC')).rejects.toMatchObject({ code: 'split_required' });
  });

  it('tracking statuses come from the page; paid never does', async () => {
    const id = await newReceipt();
    const buyer = Wallet.createRandom().address.toLowerCase();
    await recordPortalEvent(deps, id, { status: 'link_opened' });
    await recordPortalEvent(deps, id, { status: 'buyer_logged_in', wallet: buyer });
    await recordPortalEvent(deps, id, { error: { code: 'PORTAL_CHAIN_USER_REJECTED', message: 'User rejected the request.' } });
    const receipt = await receiptOf(id);
    expect(receipt).toMatchObject({ status: 'buyer_logged_in', buyerWallet: buyer, lastBuyerError: { code: 'PORTAL_CHAIN_USER_REJECTED' } });
    expect(receipt.statusHistory.map((change) => change.status)).toEqual(['link_opened', 'buyer_logged_in']);
  });

  it('stock is taken once per paid receipt, never below zero, under 20 concurrent payments of the last items', async () => {
    const sku = `LAST-${store.name}-${Date.now()}`;
    await upsertInventoryItem(deps, merchant, InventoryUpsertInput.parse({ sku, name: 'Last ones', priceUsd: 5, stockQty: 5 }));
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { receipt } = await createOrder(deps, { wallet: merchant, subscriptionId: null }, { items: [{ sku, qty: 1 }] });
      ids.push(receipt.receiptId);
    }
    const buyer = await newWallet();
    const hashes: string[] = [];
    for (const id of ids) hashes.push(await pay(buyer, await quoteFor(deps, id, 'USDC')));
    // Every payment verified at once, and the first one reported five more times over.
    const answers = await Promise.all([...ids.map((id, i) => verified(deps, id, hashes[i]!)), ...Array.from({ length: 5 }, () => verified(deps, ids[0]!, hashes[0]!))]);
    expect(answers.slice(0, 20).every((answer) => answer.status === 'paid')).toBe(true);
    const item = (await deps.inventory.findBySku(merchant, sku))!.value;
    expect(item.stockQty).toBe(0);
    const receipts = await Promise.all(ids.map(receiptOf));
    const short = receipts.filter((receipt) => receipt.stock!.shortfall.length > 0);
    expect(short).toHaveLength(15);
    expect(short.every((receipt) => receipt.stock!.shortfall[0]!.missing === 1)).toBe(true);
  });
}, 90_000); // each test waits on mined transactions and, on Cosmos, full-container scans: slow on a busy machine
