import { receiptCore } from '../support/fixtures';
import { beforeEach, describe, expect, it } from 'vitest';
import type { MemoryEventQueue } from '../../shared/adapters/memory/deliveries';
import type { AppDeps } from '../../shared/app/deps';
import { expireReceipts } from '../../shared/app/payments/expiry';
import { changeStatus } from '../../shared/app/receipt-status';
import { memoryDeps } from '../../shared/composition';
import { newReceipt, type ReceiptStatus } from '../../shared/domain/receipt';
import { wallets } from '../support/stores';

const HOUR = 3_600_000;
const EXPIRY = 24 * HOUR;
const START = 1_700_000_000_000;

let now = START;
const clock = { now: () => now };
let deps: AppDeps;

/** A receipt made at `createdAt` and then set to `status` directly (this file is about expiry, not the path there). */
const receiptAt = async (receiptId: string, createdAt: number, status: ReceiptStatus, wallet = wallets.alice) => {
  const receipt = newReceipt(
    receiptCore({ receiptId, wallet, status, usd: 4, label: 'Tea', customerTotalUsd: 4.1, source: 'order' }),
    createdAt,
    { webhookUrl: 'http://127.0.0.1:9/hook' },
  );
  await deps.receipts.create(wallet, receipt);
  return receipt;
};

const stored = async (receiptId: string, wallet = wallets.alice) => (await deps.receipts.get(wallet, receiptId))!.value;

beforeEach(() => {
  now = START;
  deps = memoryDeps({ clock });
  deps = { ...deps, settings: { ...deps.settings, payments: { ...deps.settings.payments, receiptExpiryMs: EXPIRY } } };
});

describe('expireReceipts', () => {
  const unpaid: ReceiptStatus[] = ['generated', 'pending', 'link_opened', 'buyer_logged_in', 'checkout_initialized', 'checkout_success'];

  it.each(unpaid)('fails a %s receipt made before now − receiptExpiryMs with PORTAL_SESSION_EXPIRED, as the service', async (status) => {
    await receiptAt('r-old', START - EXPIRY - 1, status);
    expect(await expireReceipts(deps)).toEqual({ expired: ['r-old'], skipped: [] });
    const receipt = await stored('r-old');
    expect(receipt).toMatchObject({ status: 'failed', previousStatus: status, failure: { failureCode: 'PORTAL_SESSION_EXPIRED', failureCategory: 'session' } });
    expect(receipt.statusHistory.at(-1)).toMatchObject({ status: 'failed', previousStatus: status, by: 'service', failureCode: 'PORTAL_SESSION_EXPIRED', at: START });
  });

  it('leaves receipts younger than the expiry, and those exactly at it', async () => {
    await receiptAt('r-young', START - EXPIRY + HOUR, 'pending');
    await receiptAt('r-edge', START - EXPIRY, 'link_opened');
    expect(await expireReceipts(deps)).toEqual({ expired: [], skipped: [] });
    expect((await stored('r-young')).status).toBe('pending');
    expect((await stored('r-edge')).status).toBe('link_opened');

    now += 1;
    expect((await expireReceipts(deps)).expired).toEqual(['r-edge']);
    now += HOUR;
    expect((await expireReceipts(deps)).expired).toEqual(['r-young']);
  });

  it.each<ReceiptStatus>(['paid', 'reconciled', 'failed', 'refund_requested', 'refunded'])('never touches a %s receipt, however old', async (status) => {
    await receiptAt('r-done', START - 10 * EXPIRY, status);
    expect(await expireReceipts(deps)).toEqual({ expired: [], skipped: [] });
    const receipt = await stored('r-done');
    expect(receipt.status).toBe(status);
    expect(receipt.statusHistory).toEqual([]);
  });

  it('follows the configured expiry', async () => {
    await receiptAt('r-1', START - 2 * HOUR, 'generated');
    expect((await expireReceipts(deps)).expired).toEqual([]);
    deps = { ...deps, settings: { ...deps.settings, payments: { ...deps.settings.payments, receiptExpiryMs: HOUR } } };
    expect((await expireReceipts(deps)).expired).toEqual(['r-1']);
  });

  it('takes at most `limit` a run, oldest first, across merchants; the next run takes the rest', async () => {
    await receiptAt('r-c', START - EXPIRY - 1_000, 'pending');
    await receiptAt('r-a', START - EXPIRY - 3_000, 'generated', wallets.bob);
    await receiptAt('r-b', START - EXPIRY - 2_000, 'link_opened');
    expect((await expireReceipts(deps, 2)).expired).toEqual(['r-a', 'r-b']);
    expect((await stored('r-c')).status).toBe('pending');
    expect((await expireReceipts(deps, 2)).expired).toEqual(['r-c']);
    expect((await expireReceipts(deps, 2)).expired).toEqual([]);
    expect((await stored('r-a', wallets.bob)).status).toBe('failed');
  });

  it('sends the merchant the status change', async () => {
    await receiptAt('r-old', START - EXPIRY - 1, 'link_opened');
    await expireReceipts(deps);
    const bodies = (deps.queue as MemoryEventQueue).take('webhooks').map((entry) => JSON.parse((entry.message as { body: string }).body));
    expect(bodies).toEqual([expect.objectContaining({ receiptId: 'r-old', status: 'failed', previousStatus: 'link_opened', failureCode: 'PORTAL_SESSION_EXPIRED' })]);
  });

  it('skips a receipt that is gone meanwhile and expires the others', async () => {
    await receiptAt('r-1', START - EXPIRY - 2, 'pending');
    await receiptAt('r-2', START - EXPIRY - 1, 'pending');
    const receipts = deps.receipts;
    deps = {
      ...deps,
      receipts: Object.assign(Object.create(receipts), {
        get: async (wallet: string, id: string) => (id === 'r-1' ? undefined : receipts.get(wallet, id)),
      }),
    };
    expect(await expireReceipts(deps)).toEqual({ expired: ['r-2'], skipped: ['r-1'] });
  });

  it('leaves an expired receipt payable: a later valid payment still makes it paid', async () => {
    await receiptAt('r-old', START - EXPIRY - 1, 'checkout_success');
    await expireReceipts(deps);
    expect((await stored('r-old')).status).toBe('failed');
    const outcome = await changeStatus(deps, { wallet: wallets.alice, receiptId: 'r-old', status: 'paid', actor: 'service', facts: { transactionHash: '0x' + 'ab'.repeat(32) } });
    expect(outcome.ignored).toBeUndefined();
    expect(await stored('r-old')).toMatchObject({ status: 'paid', previousStatus: 'failed', failure: null, transactionHash: '0x' + 'ab'.repeat(32) });
    // and a paid receipt is not expired again
    now += 10 * EXPIRY;
    expect((await expireReceipts(deps)).expired).toEqual([]);
  });
});
