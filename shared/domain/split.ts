import type { MerchantSplit, SplitRecipient } from './merchant';

export const SPLIT_DEPLOYMENTS_PER_DAY = 3;
export const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Who a new split pays: the merchant gets what the platform and partner fees leave; the platform
 * and the partner are payees only when their share is above zero.
 */
export const splitRecipients = (input: {
  merchant: string;
  platformWallet: string;
  platformFeeBps: number;
  partnerFeeBps: number;
  partnerWallet: string | null;
}): SplitRecipient[] => {
  const partnerBps = input.partnerWallet ? input.partnerFeeBps : 0;
  const recipients: SplitRecipient[] = [{ address: input.merchant, bps: 10_000 - input.platformFeeBps - partnerBps, role: 'merchant' }];
  if (input.platformFeeBps > 0) recipients.push({ address: input.platformWallet, bps: input.platformFeeBps, role: 'platform' });
  if (partnerBps > 0) recipients.push({ address: input.partnerWallet!, bps: partnerBps, role: 'partner' });
  return recipients;
};

export const sameRecipients = (a: SplitRecipient[], b: SplitRecipient[]) =>
  a.length === b.length && a.every((recipient, index) => recipient.address === b[index]!.address && recipient.bps === b[index]!.bps && recipient.role === b[index]!.role);

export const toSplitView = (split: MerchantSplit) => ({
  address: split.address,
  recipients: split.recipients,
  txHash: split.txHash,
  deployedAt: split.deployedAt,
  chainId: split.chainId,
  platformFeeBps: split.platformFeeBps,
  partnerFeeBps: split.partnerFeeBps,
});
