import { defaultShopConfig, type ShopConfig } from './shop';
import type { Plan } from './subscription';
import type { WebhookSigning } from './webhook-secret';

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

/** A plan the wallet paid for (x402 subscription) or a platform admin gave it, until `expiresAt` (null: no end). */
export interface WalletPlan {
  name: Exclude<Plan, 'development'>;
  expiresAt: number | null;
  source: 'x402' | 'admin';
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
  /** Absent: the starter plan. */
  plan?: WalletPlan;
  /**
   * The secret that signs the webhooks of receipts no API key created, sealed (never in an answer
   * but the one that made it). Absent until the webhook URL is first set or a secret is made.
   */
  webhookSigning?: WebhookSigning;
  /**
   * Derived from `shop` and `split` on every write (`withDirectoryFields`), for the directory's query
   * in the store: listed under a slug with a deployed split, and the lower-cased text `q` searches.
   * Absent on documents written before the directory existed: not listed until written again.
   */
  directoryListed?: boolean;
  directorySearchText?: string;
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

/** The plan a wallet's new keys come on: a paid or granted plan while its term runs, else starter. */
export const currentPlanOf = (merchant: Pick<Merchant, 'plan'>, now: number): Exclude<Plan, 'development'> =>
  merchant.plan && (merchant.plan.expiresAt === null || merchant.plan.expiresAt > now) ? merchant.plan.name : 'starter';
