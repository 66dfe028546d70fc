import { beforeEach, describe, expect, it } from 'vitest';
import { FEE_WINDOW_BLOCKS, MAX_FEE_WINDOWS, getBillingBalance } from '../../shared/app/billing';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps } from '../../shared/composition';
import { ZERO_ADDRESS } from '../../shared/domain/payment';
import type { Subscription } from '../../shared/domain/subscription';
import type { Chain, SplitTransfer } from '../../shared/ports/chain';
import { merchantWithSplit } from '../support/chain-merchant';

/**
 * The platform's fees in `GET /api/billing/balance`, to the unit, from a split's logs a stand-in
 * chain serves: only the period's blocks count, only distributions to the platform's payee are paid,
 * the platform's share of every payment is accrued, ETH is valued at the feed, and a period longer
 * than the windows read is said to be incomplete. (test/http/reserve-billing.test.ts reads a real split on anvil.)
 */
const USDC = '0x' + 'a'.repeat(40);
const SPLIT = '0x' + '5'.repeat(40);
const ETHER = 10n ** 18n;

let head: number;
let periodStartBlock: number;
let transfers: SplitTransfer[];
let deps: AppDeps;
let merchant: string;
let platform: string;

const standIn = (): Chain =>
  ({
    chainId: 31337,
    deploySplit: async () => ({ address: SPLIT, txHash: '0x' + 'c'.repeat(64), blockNumber: 1, created: true }),
    blockNumber: async () => head,
    firstBlockAtOrAfter: async () => periodStartBlock,
    splitTransfers: async (split: string, range: { fromBlock: number; toBlock: number }) =>
      transfers.filter((transfer) => split === SPLIT && transfer.blockNumber >= range.fromBlock && transfer.blockNumber <= range.toBlock),
    ethUsdPrice: async () => ({ answer: 3_000n * 10n ** 8n, decimals: 8, updatedAt: Date.now() }),
  }) as unknown as Chain;

let serial = 0;
const transfer = (kind: SplitTransfer['kind'], token: string, to: string, amount: bigint, blockNumber: number): SplitTransfer => ({
  kind,
  token,
  from: kind === 'payment' ? '0x' + 'b'.repeat(40) : SPLIT,
  to: kind === 'payment' ? SPLIT : to,
  amount: amount.toString(),
  txHash: `0x${(++serial).toString(16).padStart(64, '0')}`,
  blockNumber,
  logIndex: 0,
});

const subscription = (): Subscription => ({ id: 'sub-billing', wallet: merchant, plan: 'pro', scopes: ['split:read'], status: 'active', createdAt: Date.now() - 3_600_000 }) as unknown as Subscription;

beforeEach(async () => {
  head = 1_000;
  periodStartBlock = 400;
  const chain = standIn();
  const base = memoryDeps({ chain });
  deps = {
    ...base,
    settings: {
      ...base.settings,
      tokens: [
        { symbol: 'USDC', address: USDC, decimals: 6 },
        { symbol: 'ETH', address: ZERO_ADDRESS, decimals: 18 },
      ],
      payments: { ...base.settings.payments, confirmations: 1 },
    },
  };
  ({ merchant, platform } = await merchantWithSplit(deps, chain));
  transfers = [
    // Before the period: not this period's.
    transfer('payment', USDC, SPLIT, 100_000_000n, 399),
    transfer('distribution', USDC, '', 1_000_000n, 399),
    // In it: 50 USDC and 0.02 ETH paid in; the platform was distributed 0.5 USDC and 0.0001 ETH, the merchant the rest of the USDC.
    transfer('payment', USDC, SPLIT, 50_000_000n, 400),
    transfer('payment', ZERO_ADDRESS, SPLIT, (2n * ETHER) / 100n, 700),
    transfer('distribution', USDC, '', 49_500_000n, 800),
    transfer('distribution', ZERO_ADDRESS, '', ETHER / 10_000n, 800),
    transfer('distribution', USDC, '', 500_000n, 801),
  ];
  // Distributions name their payee: the merchant's 49.5 USDC, and the platform's the rest.
  transfers[1]!.to = platform;
  transfers[4]!.to = merchant;
  transfers[5]!.to = platform;
  transfers[6]!.to = platform;
});

describe('the platform fees of a billing period', () => {
  it('counts the period’s blocks only: paid is what the platform was distributed, accrued its 1 % of every payment', async () => {
    const { platformFees } = await getBillingBalance(deps, subscription());
    expect(platformFees).toMatchObject({ split: SPLIT, platformWallet: platform, platformFeeBps: 100, fromBlock: 400, toBlock: 1_000, complete: true, note: null });
    expect(platformFees.tokens).toEqual([
      expect.objectContaining({ symbol: 'USDC', paid: '500000', paidUsd: 0.5, accrued: '500000', accruedUsd: 0.5 }),
      expect.objectContaining({ symbol: 'ETH', paid: (ETHER / 10_000n).toString(), paidUsd: 0.3, accrued: (2n * ETHER / 10_000n).toString(), accruedUsd: 0.6 }),
    ]);
    expect(platformFees).toMatchObject({ paidUsd: 0.8, accruedUsd: 1.1 });
  });

  it(`reads at most ${MAX_FEE_WINDOWS} windows of ${FEE_WINDOW_BLOCKS} blocks, the latest, and says the count is partial`, async () => {
    head = 2_000_000;
    periodStartBlock = 10;
    const earliest = head - (MAX_FEE_WINDOWS - 1) * FEE_WINDOW_BLOCKS;
    transfers.push(transfer('payment', USDC, SPLIT, 10_000_000n, earliest - 1), transfer('payment', USDC, SPLIT, 20_000_000n, earliest));
    const { platformFees } = await getBillingBalance(deps, subscription());
    expect(platformFees).toMatchObject({ fromBlock: earliest, toBlock: head, complete: false, note: `the period spans more than ${MAX_FEE_WINDOWS * FEE_WINDOW_BLOCKS} blocks: fees are counted from block ${earliest}` });
    expect(platformFees.tokens[0]).toMatchObject({ symbol: 'USDC', paid: '0', accrued: '200000' });
  });

  it('says that earlier splits of the merchant are not counted', async () => {
    const stored = (await deps.merchants.get(merchant, merchant))!;
    await deps.merchants.upsert(merchant, { ...stored.value, splitHistory: [{ ...stored.value.split!, address: '0x' + '6'.repeat(40) }] });
    const { platformFees } = await getBillingBalance(deps, subscription());
    expect(platformFees.note).toBe('fees through earlier splits of this merchant are not counted');
    expect(platformFees.tokens[0]).toMatchObject({ accrued: '500000' });
  });
});
