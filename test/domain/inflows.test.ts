/** The per-token account of a range (shared/domain/inflows.ts): what arrived, against what was recorded and what nobody claims. */
import { describe, expect, it } from 'vitest';
import { reconcileTotals, type SplitTransactionView } from '../../shared/domain/inflows';
import { ZERO_ADDRESS } from '../../shared/domain/payment';

const USDC = '0x' + 'c0'.repeat(20);
const transfer = (kind: SplitTransactionView['kind'], attribution: SplitTransactionView['attribution'], amount: string, token = USDC): SplitTransactionView => ({
  kind,
  token,
  from: '0x' + '11'.repeat(20),
  to: '0x' + '22'.repeat(20),
  amount,
  txHash: '0x' + 'aa'.repeat(32),
  blockNumber: 1,
  logIndex: 0,
  attribution,
  receiptId: null,
});

describe('reconcileTotals', () => {
  it('counts a payment and an unattributed transfer in, a sweep once (as swept, not as an inflow), and nothing that leaves the split', () => {
    const totals = reconcileTotals(
      [transfer('deposit', 'payment', '20000000'), transfer('payment', 'unattributed', '777000'), transfer('payment', 'sweep', '20000000'), transfer('distribution', null, '19800000')],
      [],
      [{ token: USDC, amount: 20_000_000n }],
    );
    expect(totals).toEqual([{ token: USDC, inflows: '20777000', recorded: '20000000', unattributed: '777000', swept: '20000000', difference: '0' }]);
  });

  it('measures ETH at deposit addresses by what they received: beyond the records it is unattributed, records beyond it are a difference', () => {
    const totals = reconcileTotals(
      [],
      [
        { address: '0x' + 'd1'.repeat(20), receiptId: 'R-1', received: '1500', recorded: '1000', unattributed: '500' },
        { address: '0x' + 'd2'.repeat(20), receiptId: 'R-2', received: '300', recorded: '0', unattributed: '300' },
      ],
      [
        { token: ZERO_ADDRESS, amount: 1_000n },
        // A record of ETH that never reached any address.
        { token: ZERO_ADDRESS, amount: 42n },
      ],
    );
    expect(totals).toEqual([{ token: ZERO_ADDRESS, inflows: '1800', recorded: '1042', unattributed: '800', swept: '0', difference: '-42' }]);
  });

  it('keeps tokens apart (a token the shop does not accept is its own line), in address order', () => {
    const foreign = '0x' + 'F0'.repeat(20);
    const totals = reconcileTotals([transfer('deposit', 'unattributed', '5', foreign), transfer('deposit', 'payment', '7')], [], [{ token: USDC, amount: 7n }]);
    expect(totals.map((total) => [total.token, total.inflows, total.unattributed, total.difference])).toEqual([
      [USDC, '7', '0', '0'],
      [foreign.toLowerCase(), '5', '5', '0'],
    ]);
  });
});
