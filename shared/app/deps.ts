import type { ChainState, PayToken, PayTokenSymbol } from '../domain/payment';
import type { PricingConfig } from '../domain/pricing';
import type { Session } from '../domain/session';
import type { Plan } from '../domain/subscription';
import type { SessionTokens, SignInVerifier } from '../ports/auth';
import type { Chain } from '../ports/chain';
import type { Claim, DocumentCollection } from '../ports/documents';
import type { KeyIssuer } from '../ports/key-issuer';
import type { PaymentSettler } from '../ports/payment-settler';
import type { X402Protocol } from '../ports/x402-protocol';
import type { OnrampProvider, SandboxDesk } from '../ports/onramp';
import type { MerchantRepository } from '../ports/merchants';
import type { MetricsSink } from '../ports/metrics';
import type { ReceiptRepository } from '../ports/receipts';
import type { ReceiptSigner } from '../ports/receipt-signer';
import type { DeliveryLog, EventQueue, SecretBox, WebhookSender } from '../ports/webhooks';
import type { InventoryRepository } from '../ports/inventory-repository';
import type { Clock, HealthProbe, Ids, RateLimiter } from '../ports/runtime';
import type { SubscriptionRepository } from '../ports/subscription-repository';

/** Values from configuration that use cases and the HTTP layer need. */
export interface Settings {
  version: string;
  baseUrl: string;
  planQuotas: Record<Plan, number>;
  /** The secret an edge proxy injects; a client may not send another. */
  edgeSecret: string | undefined;
  /** Calls a minute per client address on routes without a key (enforced at the gateway). */
  keylessRateLimitPerMinute: number;
  /** Calls a minute per client address on the x402 routes, besides the keyless limit (enforced at the gateway). */
  x402RateLimitPerMinute: number;
  /** Calls a minute about one receipt on the buyer's (portal) routes. */
  portalRateLimitPerMinute: number;
  /** Who may frame this service's pages (CSP `frame-ancestors`). */
  frameAncestors: string;
  /** Relayer-paid split deployments per UTC day, all merchants together. */
  splitDeployDailyBudget: number;
  /** What else the relayer pays gas for, and when: x402 settlements and distributions. */
  relayer: RelayerSettings;
  /** How long a subscription record may be served from memory. */
  subscriptionCacheMs: number;
  /** The sign-in domain (EIP-4361 `domain`): from configuration, never from a request's Host. */
  siweDomain: string;
  chainId: number;
  /** Wallets with the platform admin role (lower-case). */
  adminWallets: string[];
  /** APP_ENV=development: the local stack's relaxed rules (http webhooks, the development plan). */
  development: boolean;
  /** The deployment's brand (white-label partner), and its display name. */
  brandKey: string;
  brandName: string;
  platformWallet: string | undefined;
  /** The brand's fees until a platform admin sets them. */
  defaultPricing: { platformFeeBps: number; partnerFeeBps: number; partnerWallet: string | null };
  /** Tokens a buyer can pay with on the configured chain (ETH is the zero address; offered only with a price feed). */
  tokens: PayToken[];
  payments: PaymentSettings;
  /** Prefix of the webhook headers (`X-Service-Signature`, …). */
  webhookHeaderPrefix: string;
  /** Receipt-signing keys rotated out (lower-case address, when it stopped signing, Unix ms). */
  retiredReceiptSigners: Array<{ address: string; retiredAt: number }>;
}

/** The relayer's gas besides split deployments (docs/decisions.md, "The relayer's budget"). */
export interface RelayerSettings {
  /** x402 settlements per UTC day, all payers together. */
  settlementsPerDay: number;
  /** Distributions the reconcile timer sends per UTC day, all splits together. */
  distributionsPerDay: number;
  /** `sweepMany` transactions (up to 50 deposits each) the reconcile timer sends per UTC day, all shops together. */
  sweepsPerDay: number;
  /** The smallest x402 order, USDC atomic units: never below the interface document's 100000. */
  x402MinOrder: bigint;
  /** What a split must hold of a token (atomic units) before the relayer distributes it; 0: whatever it holds. */
  distributeMin: Record<PayTokenSymbol, bigint>;
}

/** How payments are quoted, verified and watched on the deployment's chain. */
export interface PaymentSettings {
  confirmations: number;
  /** Base of transaction links (`<url>/tx/<hash>`); null: no explorer. */
  explorerUrl: string | null;
  ethUsdFeed: string | null;
  feedHeartbeatMs: number;
  slippageBps: number;
  quoteLockMs: number;
  receiptExpiryMs: number;
  /** Blocks per `eth_getLogs` call of the watcher. */
  watchBlockRange: number;
}

/** Everything a use case may call: ports only, built once per process by the composition root. */
export interface AppDeps {
  settings: Settings;
  clock: Clock;
  ids: Ids;
  inventory: InventoryRepository;
  subscriptions: SubscriptionRepository;
  rateLimiter: RateLimiter;
  keyIssuer: KeyIssuer;
  /** Absent where no chain is configured: chain calls then answer 503. */
  chain: Chain | undefined;
  claims: DocumentCollection<Claim>;
  merchants: MerchantRepository;
  receipts: ReceiptRepository;
  deliveries: DeliveryLog;
  queue: EventQueue;
  webhookSender: WebhookSender;
  secretBox: SecretBox;
  /** Approximate number of messages in a queue (for the queue-depth metric). */
  queueDepth(queue: string): Promise<number>;
  metrics: MetricsSink;
  platform: DocumentCollection<PricingConfig>;
  /** The payment watcher's cursor and watch list. */
  chainState: DocumentCollection<ChainState>;
  sessions: DocumentCollection<Session>;
  sessionTokens: SessionTokens;
  signIn: SignInVerifier;
  /** Verifies and settles x402 payments: the relayer in process, or a remote facilitator. */
  settler: PaymentSettler;
  /** The x402 wire format and the reads its challenges and sign-ins need, from the protocol's packages. */
  x402: X402Protocol;
  /** Signs paid receipts' proofs (EIP-712) with the deployment's receipt-signing key. */
  receiptSigner: ReceiptSigner;
  /** The card on-ramp; absent where none is configured (the portal then offers no card payment). */
  onramp: OnrampProvider | undefined;
  /** The sandbox provider's side of its hosted page, where the sandbox is the on-ramp. */
  onrampSandbox: SandboxDesk | undefined;
  probes: { store: HealthProbe; queue: HealthProbe };
}
