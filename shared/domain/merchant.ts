import { defaultShopConfig, type ShopConfig } from './shop';

export type SplitRole = 'merchant' | 'platform' | 'partner';

export interface SplitRecipient {
  address: string;
  bps: number;
  role: SplitRole;
}

/** A deployed split as the service records it: immutable, so its fees are what it really pays. */
export interface MerchantSplit {
  address: string;
  recipients: SplitRecipient[];
  platformFeeBps: number;
  partnerFeeBps: number;
  txHash: string;
  chainId: number;
  deployedAt: number;
}

/** One document per merchant wallet: its shop configuration and its split. */
export interface Merchant {
  id: string;
  wallet: string;
  shop: ShopConfig;
  split: MerchantSplit | null;
  /** Earlier splits, newest first. */
  splitHistory: MerchantSplit[];
  /** When new splits were deployed (the relayer pays gas, so deployments are limited per day). */
  splitDeployments: number[];
  createdAt: number;
  updatedAt: number;
}

export const newMerchant = (wallet: string, now: number): Merchant => ({
  id: wallet,
  wallet,
  shop: defaultShopConfig(),
  split: null,
  splitHistory: [],
  splitDeployments: [],
  createdAt: now,
  updatedAt: now,
});
