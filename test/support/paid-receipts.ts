import { createReceipt } from '../../shared/app/receipts';
import { changeStatus } from '../../shared/app/receipt-status';
import type { AppDeps } from '../../shared/app/deps';
import type { Quote } from '../../shared/domain/payment';

export const USDC = '0x' + 'c0'.repeat(20);
export const SPLIT = '0x' + '5b'.repeat(20);
export const BUYER = '0x' + '9e'.repeat(20);

/** Receipt lines with everything a line may carry: sku, quantity, unit price, and lines with none. */
export const proofLines = [
  { label: 'Ceramic mug', sku: 'MUG-CERAMIC', qty: 2, priceUsd: 24 },
  { label: 'Gift card, 25 USD', priceUsd: 25 },
  { label: 'Tax', priceUsd: 1.74 },
];

/** A USDC quote to the split, as the portal (or an x402 order) records it. */
export const usdcQuote = (deps: Pick<AppDeps, 'settings'>, amount: string, at: number): Quote => ({
  quoteId: `q_${at}`,
  token: 'USDC',
  tokenAddress: USDC,
  chainId: deps.settings.chainId,
  payTo: SPLIT,
  amount,
  decimals: 6,
  usd: 50.74,
  rate: 1,
  createdAt: at,
  expiresAt: at + 600_000,
  uri: `ethereum:${USDC}@${deps.settings.chainId}/transfer?address=${SPLIT}&uint256=${amount}`,
});

/**
 * A receipt of `wallet` made paid by the service, with the facts the payment verification writes
 * (what the chain tests do for real): the status service signs its proof with the change.
 */
export const payReceipt = async (deps: AppDeps, wallet: string, id: string, options: { txHash?: string; amount?: string } = {}) => {
  await createReceipt(deps, { wallet, subscriptionId: null }, { id, lineItems: proofLines, totalUsd: 50.74 });
  const amount = options.amount ?? '51250000';
  const now = deps.clock.now();
  return changeStatus(deps, {
    wallet,
    receiptId: id,
    status: 'paid',
    actor: 'service',
    facts: {
      quotes: [usdcQuote(deps, amount, now)],
      transactionHash: options.txHash ?? '0x' + 'ab'.repeat(32),
      buyerWallet: BUYER,
      token: 'USDC',
      amountPaid: amount,
      amountOverpaid: null,
      paidAt: now,
    },
  });
};
