/**
 * What reached a shop on chain, and whose it is: every transfer into its split and into its receipts'
 * deposit addresses, each attributed to the payment that counts it or marked unattributed, so the
 * merchant can account for every unit. The rules of attribution and the per-token sums are here; the
 * chain and ledger reads are in shared/app/inflows.ts.
 */
import { z } from 'zod';
import { ZERO_ADDRESS } from './payment';

/**
 * `payment`: a payment of a receipt the service recorded (at its deposit address), or one the payment
 * ledger gives to something (an x402 settlement, a payment made to the split before deposit
 * addresses). `sweep`: a deposit address's balance reaching the split: counted already when it
 * reached the address, so never again. `unattributed`: nothing claims it (a stray to the split, a
 * token the shop does not accept, a transfer to a deposit address not judged a payment).
 */
export const inflowAttributions = ['payment', 'sweep', 'unattributed'] as const;
export type InflowAttribution = (typeof inflowAttributions)[number];

export const splitTransactionKinds = ['payment', 'deposit', 'distribution', 'withdrawal'] as const;

/** One transfer of `GET /api/split/transactions`, from a chain log. */
export const SplitTransactionView = z.object({
  kind: z
    .enum(splitTransactionKinds)
    .describe(
      'payment: into the split; deposit: into a deposit address of one of the shop’s receipts; distribution: out of the split to a payee; withdrawal: a payee credited earlier (it had refused a transfer) takes its share out',
    ),
  token: z.string().describe('the token contract (any, accepted or not), lower-case; the zero address for ETH'),
  from: z.string(),
  to: z.string(),
  amount: z.string().describe('atomic units, decimal string'),
  txHash: z.string(),
  blockNumber: z.number().int(),
  logIndex: z.number().int(),
  attribution: z
    .enum(inflowAttributions)
    .nullable()
    .describe('for a payment or a deposit: payment (a payment of a receipt, or an x402 settlement), sweep (a deposit address emptied into the split: counted when it reached the address), unattributed (nothing claims it); null for what leaves the split'),
  receiptId: z.string().nullable().describe('the receipt it pays, or whose deposit address it reached or left; null when none'),
});
export type SplitTransactionView = z.output<typeof SplitTransactionView>;

/**
 * ETH that reached one deposit address over the range. A plain transfer or a contract's internal call
 * leaves no log, so the amount is the address's balance at the range's end, less its balance before,
 * plus what it swept to the split in the range (a forwarder can send nowhere else).
 */
export const DepositEthView = z.object({
  address: z.string(),
  receiptId: z.string(),
  received: z.string().describe('wei that reached the address in the range'),
  recorded: z.string().describe('wei of the receipt’s ETH payments recorded in the range'),
  unattributed: z.string().describe('wei beyond the recorded payments'),
});
export type DepositEthView = z.output<typeof DepositEthView>;

/** One token's account of a block range: what arrived equals what receipts recorded plus what nobody claims. */
export const TokenReconciliation = z.object({
  token: z.string(),
  inflows: z.string().describe('atomic units that reached the split (sweeps left out) and the deposit addresses'),
  recorded: z.string().describe('the payments recorded on the shop’s receipts (x402 settlements included) mined in the range'),
  unattributed: z.string(),
  swept: z.string().describe('moved from deposit addresses to the split: not an inflow of the shop'),
  difference: z.string().describe('inflows − recorded − unattributed: "0" when every unit is accounted for'),
});
export type TokenReconciliation = z.output<typeof TokenReconciliation>;

/** A payment record's amount in a token (by contract address, lower-case; ETH the zero address). */
export interface RecordedAmount {
  token: string;
  amount: bigint;
}

/**
 * The per-token account of a range from its classified transfers, the ETH of its deposit addresses and
 * the payment records mined in it. `recorded` is summed from the records themselves, not from the
 * transfers marked `payment`: a transfer claimed but not recorded, or recorded for another amount,
 * leaves a difference.
 */
export const reconcileTotals = (
  transfers: readonly SplitTransactionView[],
  depositEth: readonly DepositEthView[],
  records: readonly RecordedAmount[],
): TokenReconciliation[] => {
  const sums = new Map<string, { inflows: bigint; recorded: bigint; unattributed: bigint; swept: bigint }>();
  const of = (token: string) => {
    const key = token.toLowerCase();
    let sum = sums.get(key);
    if (!sum) sums.set(key, (sum = { inflows: 0n, recorded: 0n, unattributed: 0n, swept: 0n }));
    return sum;
  };
  for (const transfer of transfers) {
    if (transfer.attribution === null) continue;
    const sum = of(transfer.token);
    const amount = BigInt(transfer.amount);
    if (transfer.attribution === 'sweep') {
      sum.swept += amount;
      continue;
    }
    sum.inflows += amount;
    if (transfer.attribution === 'unattributed') sum.unattributed += amount;
  }
  for (const row of depositEth) {
    const sum = of(ZERO_ADDRESS);
    sum.inflows += BigInt(row.received);
    sum.unattributed += BigInt(row.unattributed);
  }
  for (const record of records) of(record.token).recorded += record.amount;
  return [...sums]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([token, sum]) => ({
      token,
      inflows: sum.inflows.toString(),
      recorded: sum.recorded.toString(),
      unattributed: sum.unattributed.toString(),
      swept: sum.swept.toString(),
      difference: (sum.inflows - sum.recorded - sum.unattributed).toString(),
    }));
};
