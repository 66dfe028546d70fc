import { Contract, type JsonRpcProvider, type Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ChainUnavailableError, EvmChain } from '../../shared/adapters/evm/chain';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import { isRangeRefusal } from '../../shared/adapters/evm/rpc';
import type { AppDeps } from '../../shared/app/deps';
import { quoteFor } from '../../shared/app/payments/portal';
import { watchPayments, type RangeListener } from '../../shared/app/payments/watcher';
import { createReceipt } from '../../shared/app/receipts';
import { cursorId } from '../../shared/domain/payment';
import { chainWithOwnFeed, merchantWithSplit, payingSettings, testAccounts } from '../support/chain-merchant';
import { RANGE_REFUSALS, startRpcFaults } from '../support/rpc-faults';
import { memoryStore } from '../support/stores';

/**
 * The watcher behind a node that misbehaves as hosted providers do (through a fault-injecting proxy
 * in front of the run's anvil): log queries refused for their range, and 429s. Payments at deposit
 * addresses, as in payments.test.ts; the memory store.
 */
const chainInfo = inject('chain');
let provider: JsonRpcProvider;
let accounts: Awaited<ReturnType<typeof testAccounts>>;
let proxy: Awaited<ReturnType<typeof startRpcFaults>>;
let chain: EvmChain;
let direct: EvmChain;
let deps: AppDeps;
let merchant: string;

const newWallet = () => accounts.newWallet([chainInfo.usdc, chainInfo.usdt]);

beforeAll(async () => {
  provider = createProvider(chainInfo.rpcUrl, chainInfo.chainId);
  accounts = await testAccounts(provider);
  proxy = await startRpcFaults(chainInfo.rpcUrl);
  let feed: Contract;
  ({ chain: direct, feed } = await chainWithOwnFeed(newWallet));
  const relayer = await newWallet();
  chain = new EvmChain({ rpcUrl: proxy.url, chainId: chainInfo.chainId, relayerPrivateKey: relayer.privateKey, splitFactory: chainInfo.splitFactory, tokens: [chainInfo.usdc, chainInfo.usdt], ethUsdFeed: (await feed.getAddress()).toLowerCase(), depositFactory: chainInfo.depositFactory });
  const base = await memoryStore.make({ chain });
  const settings = payingSettings(base.settings, (await feed.getAddress()).toLowerCase());
  deps = { ...base, settings: { ...settings, payments: { ...settings.payments, watchBlockRange: 16 } } };
  ({ merchant } = await merchantWithSplit(deps, direct));
});
afterAll(async () => {
  chain.destroy();
  direct.destroy();
  provider.destroy();
  await proxy.close();
});

let serial = 0;
/** Receipts quoted in USDC (each at its own deposit address), with the watcher's cursor at the head. */
const quotedReceipts = async (count: number) => {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const id = `faults-${++serial}-${Date.now()}`;
    await createReceipt(deps, { wallet: merchant, subscriptionId: null }, { id, lineItems: [{ label: 'Beans', priceUsd: 3 + n }], totalUsd: 3 + n });
    ids.push(id);
  }
  const quotes = await Promise.all(ids.map((id) => quoteFor(deps, id, 'USDC')));
  proxy.passThrough();
  await watchPayments(deps);
  return { ids, quotes };
};

/** Each quote paid by its own transaction, one block each (anvil mines every transaction at once): the last block. */
const payAll = async (quotes: Array<{ payTo: string; amount: string }>) => {
  const payer: Wallet = await newWallet();
  const usdc = new Contract(chainInfo.usdc, testUsdcArtifact.abi, payer);
  let last = 0;
  for (const quote of quotes) last = (await (await usdc.getFunction('transfer')(quote.payTo, BigInt(quote.amount))).wait())!.blockNumber;
  return last;
};

const cursorKey = cursorId(chainInfo.chainId);
const cursorNow = async () => (await deps.chainState.get(cursorKey, cursorKey))?.value.nextBlock ?? -1;

const expectPaidOnce = async (ids: string[]) => {
  for (const id of ids) {
    const receipt = (await deps.receipts.get(merchant, id))!.value;
    expect(receipt.status).toBe('paid');
    expect(receipt.payments!.filter((record) => record.outcome === 'paid')).toHaveLength(1);
  }
};

describe('the watcher behind a misbehaving RPC provider', () => {
  // The width the watcher learnt lives on in the process: the second cap is narrower than the first, so it is refused too.
  it.each([
    ['Alchemy', RANGE_REFUSALS.alchemy, 2],
    ['Infura', RANGE_REFUSALS.infura, 1],
  ] as const)('narrows its range where the node caps a log query (%s’s refusal), never skipping a block', async (_name, refusal, cap) => {
    const { ids, quotes } = await quotedReceipts(10);
    const start = await cursorNow();
    const last = await payAll(quotes);
    expect(last - start).toBeGreaterThanOrEqual(9);
    proxy.capLogs(cap, refusal);
    const refusedBefore = proxy.refused.get('eth_getLogs') ?? 0;
    // Every range a run reads, in order: together they must cover every block once.
    const ranges: Array<{ fromBlock: number; toBlock: number }> = [];
    const listener: RangeListener = async (_deps, range) => {
      ranges.push(range);
    };
    for (let run = 0; run < 30 && (await cursorNow()) <= last; run++) await watchPayments(deps, [listener]);
    expect(await cursorNow()).toBeGreaterThan(last);
    expect((proxy.refused.get('eth_getLogs') ?? 0) - refusedBefore).toBeGreaterThan(0);
    expect(ranges[0]!.fromBlock).toBe(start);
    for (const [at, range] of ranges.entries()) {
      expect(range.toBlock - range.fromBlock + 1).toBeLessThanOrEqual(cap);
      if (at > 0) expect(range.fromBlock).toBe(ranges[at - 1]!.toBlock + 1);
    }
    await expectPaidOnce(ids);
    proxy.passThrough();
  });

  it('stops its runs while the node answers 429 (with Retry-After), the cursor unmoved, then catches up', async () => {
    const { ids, quotes } = await quotedReceipts(3);
    const start = await cursorNow();
    const last = await payAll(quotes);
    proxy.throttle(3_000, 1);
    const throttledBefore = proxy.refused.get('eth_blockNumber') ?? 0;
    await expect(watchPayments(deps)).rejects.toBeInstanceOf(ChainUnavailableError);
    await expect(watchPayments(deps)).rejects.toBeInstanceOf(ChainUnavailableError);
    expect(proxy.refused.get('eth_blockNumber')! - throttledBefore).toBeGreaterThan(1);
    expect(await cursorNow()).toBe(start);
    for (const id of ids) expect((await deps.receipts.get(merchant, id))!.value.status).toBe('pending');
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    for (let run = 0; run < 10 && (await cursorNow()) <= last; run++) await watchPayments(deps);
    expect(await cursorNow()).toBeGreaterThan(last);
    await expectPaidOnce(ids);
  });

  it('without Retry-After the client’s own backoff waits the 429s out: the run is late, nothing skipped', async () => {
    const { ids, quotes } = await quotedReceipts(2);
    const last = await payAll(quotes);
    proxy.throttle(1_500);
    const throttledBefore = proxy.refused.get('eth_blockNumber') ?? 0;
    const outcome = await watchPayments(deps).catch((error: unknown) => error);
    expect(proxy.refused.get('eth_blockNumber')! - throttledBefore).toBeGreaterThan(0);
    // Backed off past the window it ends well; out of attempts first, it stops as an outage.
    if (outcome instanceof Error) expect(outcome).toBeInstanceOf(ChainUnavailableError);
    for (let run = 0; run < 10 && (await cursorNow()) <= last; run++) await watchPayments(deps);
    expect(await cursorNow()).toBeGreaterThan(last);
    await expectPaidOnce(ids);
  });
});

describe('log-query refusals the chain adapter recognises', () => {
  const rpcError = (code: number, message: string) => ({ code: 'UNKNOWN_ERROR', message: 'could not coalesce error', error: { code, message } });
  it.each([
    [RANGE_REFUSALS.alchemy.code, RANGE_REFUSALS.alchemy.message],
    [RANGE_REFUSALS.infura.code, RANGE_REFUSALS.infura.message],
    [-32000, 'eth_getLogs is limited to a 10,000 range'],
    [-32000, 'exceed maximum block range: 50000'],
    [-32600, 'block range is too wide'],
    [-32000, 'Block range limit exceeded.'],
  ])('%i %s: a range refusal', (code, message) => {
    expect(isRangeRefusal(rpcError(code, message))).toBe(true);
  });
  it.each([
    [-32005, 'project ID request rate exceeded'],
    [-32005, 'daily request count exceeded, request rate limited'],
    [429, 'Your app has exceeded its compute units per second capacity.'],
    [-32000, 'header not found'],
  ])('%i %s: not a range refusal (rate limits are outages)', (code, message) => {
    expect(isRangeRefusal(rpcError(code, message))).toBe(false);
  });
});
