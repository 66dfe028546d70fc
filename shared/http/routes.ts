import { z } from 'zod';
import type { ErrorCode } from '../domain/errors';
import { DirectoryQuery, DirectoryResponse } from '../domain/directory';
import {
  InventoryDeleteQuery,
  InventoryItem,
  InventoryListQuery,
  InventoryListResponse,
  InventoryUpsertInput,
} from '../domain/inventory';
import type { Role } from '../domain/session';
import { OrderBody, OrderRequest } from '../domain/order';
import { PricingUpdate } from '../domain/pricing';
import { blankAsAbsent, queryInteger, queryIntegerOr } from '../domain/query-params';
import { ReceiptDetailView, ReceiptView, StatusView } from '../domain/receipt-views';
import { DepositEthView, SplitTransactionView } from '../domain/inflows';
import { ReceiptProofView, ReceiptSignerView } from '../domain/receipt-proof';
import { ReceiptCreateRequest, ReceiptListQuery, ReceiptStatusQuery, ReceiptStatusUpdate } from '../domain/receipt-request';
import { ShopBranding, ShopConfig, ShopConfigUpdate, ShopLayout, Slug } from '../domain/shop';
import { ReserveBalancesView, ReserveRecommendationView } from '../domain/reserve';
import { BillingBalanceView } from '../domain/billing';
import { Plan, Scope, scopes } from '../domain/subscription';
import { OnrampAnswer, PaymentAnswer, PaymentSubmission, PortalEvent, PortalView, QuoteRequest, QuoteView } from '../domain/portal-views';
import { RefundView } from '../domain/receipt-views';
import { usdAmount } from '../domain/money';
import { Id } from '../domain/ids';
import { SubscriptionResult, X402OrderRequest, X402ReceiptAnswer, X402SubscribeRequest } from '../domain/x402-requests';
import { JurisdictionCode } from '../domain/tax-catalog';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call a route:
 * - `key`: an API key (with a scope, or any valid key when none is named);
 * - `session`: a signed-in wallet with a role (admin calls; `optional` for the console's pages, which
 *   answer the sign-in page without one);
 * - `public`: anyone (limited per client address at the gateway); `fromThisSite` for a write only
 *   the site's own pages make (sign-in, which sets the session cookies): refused from another origin
 *   as session writes are, and taken as JSON only, which a cross-site form cannot send;
 * - `portal`: anyone, for one receipt named by the path's `{id}` (the buyer's pages): limited per
 *   receipt here and per client address at the gateway;
 * - `x402`: anyone who pays: answered 402 with a challenge, then the payment is verified and settled
 *   before the use case runs.
 */
export type RouteAuth =
  | { kind: 'key'; scope?: Scope; /** Also a sign-in-with-x proof of the wallet instead of a key. */ signInWithX?: true }
  | {
      kind: 'session';
      role: Role;
      /**
       * A page that answers without a session too (the console: its sign-in page): no session, or one
       * that ended, reaches the use case with no caller instead of 401. GET only, so no CSRF applies.
       */
      optional?: true;
    }
  | { kind: 'public'; fromThisSite?: true }
  | { kind: 'portal' }
  | { kind: 'x402' };
export type AuthKind = RouteAuth['kind'];

/** The names of a path's `{param}` segments. */
type ParamNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}` ? Name | ParamNames<Rest> : never;
export type PathParams<P extends string> = { [K in ParamNames<P>]: string };

export interface RouteSpec<
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
  A extends RouteAuth = RouteAuth,
  P extends string = string,
> {
  /** The function name, in Azure and in logs. */
  name: string;
  method: HttpMethod;
  /** The full path; `{param}` segments; fixed segments win over parameters. */
  path: P;
  auth: A;
  /**
   * `html`: a page (the use case answers markup; security headers; errors as pages). `asset`: a file
   * (the use case answers an `Asset`: its type, bytes and cache policy). Default: JSON.
   */
  responseKind?: 'json' | 'html' | 'asset';
  /** For `asset` routes: the media types its files have (the OpenAPI document lists them). */
  assetTypes?: readonly string[];
  summary: string;
  /**
   * The path's `{param}` values that name a document, each with the id rule (`Id`): checked after the
   * caller and before the query and body, a value that fails names nothing and answers 404 not_found.
   * A parameter looked up in a fixed table (a console page, an asset file, a provider) is not listed.
   */
  params?: Partial<Record<ParamNames<P>, z.ZodType<string>>>;
  query?: Q;
  body?: B;
  /**
   * The request body as documented, when the use case validates it itself so that an earlier check
   * answers first (`body` then only parses the JSON): the schema the use case validates with.
   */
  documentedBody?: z.ZodType;
  /** Also take the body as an HTML form (`application/x-www-form-urlencoded`): a page's form posts work without script. */
  formBody?: true;
  response: R;
  successStatus?: number;
  /** The error codes this route can answer with, beyond the common ones of its auth kind. */
  errors: ErrorCode[];
}

/** A write that may be accepted while the store is down: its normal body, or that body as `data` of a degraded answer (200). */
const orDegradedBody = <T extends z.ZodType>(body: T) =>
  z.union([body, z.object({ ok: z.literal(true), degraded: z.literal(true), reason: z.literal('store_unavailable'), data: body })]);

/** The scopes a new key gets; `["all"]` stands for every scope, as `--scopes all` does for `npm run keys`. */
const ScopeRequest = z
  .array(z.enum([...scopes, 'all']))
  .min(1, 'name at least one scope')
  .refine((list) => !list.includes('all') || list.every((name) => name === 'all'), 'all stands for every scope: name it alone')
  .transform((list): Scope[] => (list.includes('all') ? [...scopes] : [...new Set(list as Scope[])]))
  .describe('the scopes to grant, or ["all"] for every scope');

const route = <Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType, const A extends RouteAuth, const P extends string>(spec: RouteSpec<Q, B, R, A, P>) => spec;

export const HealthResponse = z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  checks: z.object({ store: z.enum(['ok', 'down']), queue: z.enum(['ok', 'down']) }),
});

const KeyView = z.object({
  id: z.string(),
  prefix: z.string(),
  scopes: z.array(Scope),
  plan: Plan,
  status: z.enum(['active', 'revoked']),
  createdAt: z.number().int(),
  lastUsedAt: z.number().int().nullable(),
  revokedAt: z.number().int().nullable(),
});

const PricingView = z.object({
  brandKey: z.string(),
  platformFeeBps: z.number().int(),
  partnerFeeBps: z.number().int(),
  plans: z.record(z.string(), z.object({ priceUsd: z.number(), requestsPerMinute: z.number().int() })),
});

const Token = z.object({ symbol: z.string(), address: z.string(), decimals: z.number().int() });

const AttemptView = z.object({
  eventId: z.string(),
  attempt: z.number().int(),
  target: z.string(),
  state: z.enum(['sending', 'delivered', 'failed']),
  at: z.number().int(),
  httpStatus: z.number().int().nullable(),
  error: z.string().nullable(),
  durationMs: z.number().int().nullable(),
  signedBy: z.string().nullable().describe('the key (subscription id) that signed the attempt; null when the shop’s webhook signing secret did'),
  signedWithSecret: z.string().nullable().describe('the prefix of the shop’s webhook signing secret that signed the attempt (no key created the receipt); null when a key did'),
});

/** The shop's webhook signing secret as the merchant sees it: prefixes and times, never the secret. */
const WebhookSigningView = z.object({
  prefix: z.string(),
  createdAt: z.number().int(),
  previous: z
    .object({ prefix: z.string(), until: z.number().int() })
    .nullable()
    .describe('the secret rotated out, still signing beside the new one until `until` (Unix ms)'),
});

const DeliveryLogAnswer = z.object({
  deliveries: z.array(AttemptView),
  signingKey: z
    .object({ id: z.string(), prefix: z.string(), revoked: z.boolean() })
    .nullable()
    .describe("the key that signs the receipt's next events; revoked: it still signs them until the key is rolled (POST /api/keys/{id}/roll)"),
  signingSecret: WebhookSigningView.nullable().describe("the shop's webhook signing secret, which signs the receipt's next events when no key created it; null when a key signs them, or the shop has none yet"),
});

const ReceiptListAnswer = z.object({ receipts: z.array(ReceiptView), nextCursor: z.string().nullable(), degraded: z.literal(true).optional() });

const SendOutcome = z.object({
  ok: z.literal(true),
  eventId: z.string(),
  delivered: z.boolean(),
  httpStatus: z.number().int().nullable(),
  error: z.string().nullable(),
  durationMs: z.number().int(),
});

const RedeliveryAnswer = SendOutcome.extend({ attempt: z.number().int() });

const TerminalSale = z.object({
  amountUsd: usdAmount.refine((usd) => usd >= 0.01, 'must be at least 0.01'),
  label: z.string().trim().min(1).max(200).optional(),
  jurisdictionCode: JurisdictionCode.optional(),
});
const TerminalAnswer = z.object({ ok: z.literal(true), receipt: ReceiptView, paymentUrl: z.string(), qrUrl: z.string() });

/** The merchant console's calls of developer routes: the same use case and answer, by session instead of key. */
const MERCHANT_SESSION = { kind: 'session', role: 'merchant' } as const;

const SplitView = z.object({
  address: z.string(),
  recipients: z.array(z.object({ address: z.string(), bps: z.number().int(), role: z.enum(['merchant', 'platform', 'partner']) })),
  txHash: z.string(),
  deployedAt: z.number().int(),
  chainId: z.number().int(),
  platformFeeBps: z.number().int(),
  partnerFeeBps: z.number().int(),
});

const DepositSweepRequest = z.object({
  token: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address')
    .transform((address) => address.toLowerCase())
    .optional()
    .describe('recover this token (any ERC-20; the zero address for ETH) from the deposit addresses of your receipts of any status; default: the accepted tokens at your paid receipts\' addresses'),
  receiptId: Id.optional().describe("only this receipt's deposit address"),
});
const DepositSweepAnswer = z.object({
  ok: z.literal(true),
  chainId: z.number().int(),
  to: z.string().describe('the DepositFactory: send the transaction here from your own wallet (you pay the gas)'),
  data: z.string().nullable().describe('the sweepMany calldata; null: nothing to sweep'),
  deposits: z.array(z.object({ receiptId: z.string(), address: z.string(), split: z.string(), tokens: z.array(z.string()) })).describe('the deposits it sweeps (at most 50), each with the tokens it holds'),
  remaining: z.number().int().describe('further deposits holding something: ask again once these are swept'),
});

/** A console page's query string, each page reading its own names (search, filters, paging). */
const AdminPageQuery = z.record(z.string(), z.string().max(2_000));

const SessionView = z.object({ wallet: z.string(), roles: z.array(z.enum(['merchant', 'admin'])), expiresAt: z.number().int() });

/** The one description of the HTTP surface. */
export const routes = {
  authNonce: route({
    name: 'auth-nonce',
    method: 'GET',
    path: '/api/auth/nonce',
    auth: { kind: 'public' },
    summary: 'A single-use nonce for an EIP-4361 sign-in message (valid 5 minutes)',
    response: z.object({ nonce: z.string(), expiresAt: z.number().int(), domain: z.string(), uri: z.string(), chainId: z.number().int() }),
    errors: [],
  }),
  authLogin: route({
    name: 'auth-login',
    method: 'POST',
    path: '/api/auth/login',
    // Login CSRF: another site's page must not sign a browser in to a session of its choosing.
    auth: { kind: 'public', fromThisSite: true },
    summary: 'Sign in with an Ethereum wallet: sets the session cookie and the CSRF cookie (from this site only, as application/json)',
    body: z.object({
      message: z.string().min(1).max(4096),
      signature: z.string().regex(/^0x[0-9a-fA-F]+$/, 'must be a 0x-prefixed hex signature').max(1024),
    }),
    response: SessionView.extend({ ok: z.literal(true), csrfToken: z.string() }),
    errors: ['invalid_input', 'unauthorized', 'forbidden'],
  }),
  authLogout: route({
    name: 'auth-logout',
    method: 'POST',
    path: '/api/auth/logout',
    auth: { kind: 'session', role: 'merchant' },
    summary: 'End the session (the token stops working at once) and clear the cookies',
    response: z.object({ ok: z.literal(true) }),
    errors: [],
  }),
  keysCreate: route({
    name: 'keys-create',
    method: 'POST',
    path: '/api/keys',
    auth: { kind: 'session', role: 'merchant' },
    summary: 'Create an API key for the signed-in wallet; the key is in this answer only',
    body: z.object({
      scopes: ScopeRequest,
      /** Optional: keys come on the wallet's current plan; naming another paid plan is refused. */
      plan: z.enum(['starter', 'pro', 'enterprise', 'development']).optional(),
    }),
    response: z.object({ ok: z.literal(true), apiKey: z.string(), key: KeyView }),
    successStatus: 201,
    errors: ['invalid_input', 'forbidden', 'conflict', 'service_unavailable'],
  }),
  keysList: route({
    name: 'keys-list',
    method: 'GET',
    path: '/api/keys',
    auth: { kind: 'session', role: 'merchant' },
    summary: "The signed-in wallet's API keys (prefix, scopes, plan, dates; never the key)",
    response: z.object({ keys: z.array(KeyView) }),
    errors: [],
  }),
  keysRevoke: route({
    name: 'keys-revoke',
    method: 'DELETE',
    path: '/api/keys/{id}',
    auth: { kind: 'session', role: 'merchant' },
    summary: 'Revoke one of your API keys',
    params: { id: Id },
    response: z.object({ ok: z.literal(true), id: z.string() }),
    errors: ['not_found'],
  }),
  keysRoll: route({
    name: 'keys-roll',
    method: 'POST',
    path: '/api/keys/{id}/roll',
    auth: { kind: 'session', role: 'merchant' },
    summary: "Roll a revoked key: its receipts that can still change are signed from now on by another of your active keys (idempotent; a bounded batch a call, nextCursor goes on)",
    params: { id: Id },
    body: z.object({
      toKeyId: Id.describe('the active key that signs those receipts from now on'),
      cursor: z.preprocess(blankAsAbsent, z.string().max(500).optional()).describe('nextCursor of the previous call, to go on'),
    }),
    response: z.object({ ok: z.literal(true), id: z.string(), toKeyId: z.string(), moved: z.number().int(), nextCursor: z.string().nullable() }),
    errors: ['not_found', 'invalid_input', 'key_active', 'target_key_not_found', 'target_key_revoked', 'conflict'],
  }),
  shopConfigGet: route({
    name: 'shop-config-get',
    method: 'GET',
    path: '/api/shop/config',
    // The interface document's security declaration names siwx: a wallet's own proof also reads it.
    auth: { kind: 'key', scope: 'shop:read', signInWithX: true },
    summary: "The merchant's shop configuration: branding, layout, tax defaults, fees, webhook and directory",
    response: z.object({ config: ShopConfig }),
    errors: [],
  }),
  shopConfigUpdate: route({
    name: 'shop-config-update',
    method: 'POST',
    path: '/api/shop/config',
    auth: { kind: 'session', role: 'merchant' },
    summary: 'Replace the named groups of the shop configuration',
    body: ShopConfigUpdate,
    response: z.object({
      ok: z.literal(true),
      config: ShopConfig,
      webhookSecret: z.string().optional().describe('the webhook signing secret made now, when the webhook URL was set on a shop without one: shown this once'),
    }),
    errors: ['invalid_input', 'slug_taken'],
  }),
  pricingConfigGet: route({
    name: 'pricing-config-get',
    method: 'GET',
    path: '/api/pricing/config',
    auth: { kind: 'key' },
    summary: "The brand's platform and partner fees and the plans",
    response: PricingView,
    errors: [],
  }),
  pricingConfigUpdate: route({
    name: 'pricing-config-update',
    method: 'POST',
    path: '/api/pricing/config',
    auth: { kind: 'session', role: 'admin' },
    summary: "Platform admin: set a brand's fees (for splits deployed from now on)",
    body: PricingUpdate,
    response: PricingView.extend({ ok: z.literal(true), partnerWallet: z.string().nullable() }),
    errors: ['invalid_input'],
  }),
  siteConfig: route({
    name: 'site-config',
    method: 'GET',
    path: '/api/site/config',
    auth: { kind: 'public' },
    summary: "What a payment page needs: brand, chain, accepted tokens; with ?shop=<slug> that shop's look and fee",
    query: z.object({ shop: z.preprocess((value) => (value === '' ? undefined : value), Slug.optional()) }),
    response: z.object({
      brandKey: z.string(),
      brandName: z.string(),
      chainId: z.number().int(),
      tokens: z.array(Token),
      shop: z.object({ slug: z.string(), name: z.string(), branding: ShopBranding, layout: ShopLayout, processingFeePct: z.number() }).optional(),
    }),
    errors: ['invalid_input', 'not_found'],
  }),
  directoryShops: route({
    name: 'directory-shops',
    method: 'GET',
    path: '/api/directory/shops',
    auth: { kind: 'public' },
    summary: 'The public shop directory: listed shops with a deployed split, searched and filtered, ordered by slug, a window at a time',
    query: DirectoryQuery,
    response: DirectoryResponse,
    errors: ['invalid_input', 'unauthorized'],
  }),
  taxCatalog: route({
    name: 'tax-catalog',
    method: 'GET',
    path: '/api/tax/catalog',
    auth: { kind: 'key' },
    summary: 'Sales tax and VAT rates by jurisdiction (US states, Canadian provinces, EU member states), with source and date',
    response: z.object({
      asOf: z.string(),
      sources: z.array(z.string()),
      jurisdictions: z.array(z.object({ code: z.string(), name: z.string(), rate: z.number() })),
    }),
    errors: [],
  }),
  ordersCreate: route({
    name: 'orders-create',
    method: 'POST',
    path: '/api/orders',
    auth: { kind: 'key', scope: 'orders:create' },
    summary: 'Price items from inventory into an itemized receipt (item lines, Tax, Processing Fee)',
    // Validated by the use case after the split check, so 403 split_required comes before 400s.
    body: OrderBody,
    documentedBody: OrderRequest,
    response: z.object({ ok: z.literal(true), receipt: ReceiptView }),
    errors: ['split_required', 'items_required', 'inventory_item_not_found', 'invalid_input', 'insufficient_stock'],
  }),
  splitDeploy: route({
    name: 'split-deploy',
    method: 'POST',
    path: '/api/split/deploy',
    auth: { kind: 'session', role: 'merchant' },
    summary: "Deploy the signed-in merchant's split contract with the brand's current fees (idempotent; 3 a day)",
    response: z.object({ ok: z.literal(true), split: SplitView }),
    errors: ['platform_recipient_not_configured', 'rate_limited', 'service_unavailable'],
  }),
  splitGet: route({
    name: 'split-get',
    method: 'GET',
    path: '/api/split/deploy',
    auth: { kind: 'key', scope: 'split:read' },
    summary: "The merchant's current split contract, or null",
    response: z.object({ ok: z.literal(true), split: SplitView.nullable() }),
    errors: [],
  }),
  splitTransactions: route({
    name: 'split-transactions',
    method: 'GET',
    path: '/api/split/transactions',
    auth: { kind: 'key', scope: 'split:read' },
    summary: "Transfers into the split and into the shop's deposit addresses, each attributed (a receipt's payment, a sweep, or unattributed), and distributions out of the split, from chain logs over a bounded block range",
    query: z
      .object({
        fromBlock: queryInteger(0, Number.MAX_SAFE_INTEGER),
        toBlock: queryInteger(0, Number.MAX_SAFE_INTEGER),
        limit: queryIntegerOr(1, 200, 50),
        cursor: z.preprocess(blankAsAbsent, z.string().max(40).optional()),
      }),
    response: z.object({
      ok: z.literal(true),
      split: z.string().nullable(),
      fromBlock: z.number().int().nullable(),
      toBlock: z.number().int().nullable(),
      transactions: z.array(SplitTransactionView),
      depositEth: z.array(DepositEthView).describe('ETH that reached the shop’s deposit addresses in the range (it leaves no log: measured by balance), one entry per address that received or recorded any'),
      receiptsTruncated: z.boolean().describe('the shop has more receipts than are read for one answer: transfers into older receipts’ deposit addresses are left out, and their sweeps show as unattributed'),
      nextCursor: z.string().nullable(),
    }),
    errors: ['invalid_input', 'service_unavailable'],
  }),
  reserveBalances: route({
    name: 'reserve-balances',
    method: 'GET',
    path: '/api/reserve/balances',
    auth: { kind: 'key', scope: 'split:read' },
    summary: "The merchant's holdings per accepted token (its part of the split's undistributed balance and its wallet's), USD values, shares and the target ratios",
    response: ReserveBalancesView,
    errors: ['service_unavailable'],
  }),
  reserveRecommend: route({
    name: 'reserve-recommend',
    method: 'GET',
    path: '/api/reserve/recommend',
    auth: { kind: 'key', scope: 'split:read' },
    summary: 'The token the next payment should ask for to move the holdings toward the target ratios, with the reason and the numbers used',
    response: ReserveRecommendationView,
    errors: ['service_unavailable'],
  }),
  billingBalance: route({
    name: 'billing-balance',
    method: 'GET',
    path: '/api/billing/balance',
    auth: { kind: 'key', scope: 'split:read' },
    summary: "The merchant's standing with the platform: plan, quota, this key's requests in the billing period, renewal, and the platform fees paid through the split",
    response: BillingBalanceView,
    errors: ['service_unavailable'],
  }),
  receiptsCreate: route({
    name: 'receipts-create',
    method: 'POST',
    path: '/api/receipts',
    auth: { kind: 'key', scope: 'receipts:write' },
    summary: 'Create a receipt with your own id and lines (idempotent for the same body)',
    body: ReceiptCreateRequest,
    response: orDegradedBody(z.object({ id: z.string(), paymentUrl: z.string(), status: z.literal('pending') })),
    successStatus: 201,
    errors: ['invalid_input', 'conflict'],
  }),
  receiptsList: route({
    name: 'receipts-list',
    method: 'GET',
    path: '/api/receipts',
    auth: { kind: 'key', scope: 'receipts:read' },
    summary: 'Your receipts, newest first, a page at a time',
    query: ReceiptListQuery,
    response: ReceiptListAnswer,
    errors: ['invalid_input'],
  }),
  receiptsStatusGet: route({
    name: 'receipts-status-get',
    method: 'GET',
    path: '/api/receipts/status',
    auth: { kind: 'key', scope: 'receipts:read' },
    summary: "A receipt's status and, for a failure, its failure fields",
    query: ReceiptStatusQuery,
    response: StatusView,
    errors: ['invalid_input', 'not_found'],
  }),
  receiptsStatusPost: route({
    name: 'receipts-status-post',
    method: 'POST',
    path: '/api/receipts/status',
    auth: { kind: 'key', scope: 'receipts:write' },
    summary: 'Report a tracking status or a session failure (PORTAL_SESSION_*) from your backend',
    body: ReceiptStatusUpdate,
    response: orDegradedBody(StatusView.extend({ ok: z.literal(true), ignored: z.literal(true).optional(), reason: z.string().optional() })),
    errors: ['invalid_input', 'forbidden', 'not_found'],
  }),
  receiptsGet: route({
    name: 'receipts-get',
    method: 'GET',
    path: '/api/receipts/{id}',
    auth: { kind: 'key', scope: 'receipts:read' },
    summary: 'One of your receipts',
    params: { id: Id },
    response: ReceiptDetailView,
    errors: ['not_found'],
  }),
  receiptsDeliveries: route({
    name: 'receipts-deliveries',
    method: 'GET',
    path: '/api/receipts/{id}/deliveries',
    auth: { kind: 'key', scope: 'receipts:read' },
    summary: "The receipt's webhook delivery log: every attempt, its time, HTTP status or error, and duration",
    params: { id: Id },
    response: DeliveryLogAnswer,
    errors: ['not_found'],
  }),
  receiptsProof: route({
    name: 'receipts-proof',
    method: 'GET',
    path: '/api/receipts/{id}/proof',
    auth: { kind: 'key', scope: 'receipts:read' },
    summary: "The signed proof of a paid receipt: EIP-712 typed data (lines, total, token, amount, split, chain, transaction, time), its signature and the signer",
    params: { id: Id },
    response: ReceiptProofView,
    errors: ['not_found', 'receipt_not_paid', 'conflict', 'service_unavailable'],
  }),
  receiptsRedeliver: route({
    name: 'receipts-redeliver',
    method: 'POST',
    path: '/api/receipts/{id}/deliveries/{eventId}/redeliver',
    auth: { kind: 'key', scope: 'receipts:write' },
    summary: 'Send a logged event again now, as a new attempt with the same delivery id and bytes',
    params: { id: Id, eventId: Id },
    response: RedeliveryAnswer,
    errors: ['not_found'],
  }),
  webhooksTest: route({
    name: 'webhooks-test',
    method: 'POST',
    path: '/api/webhooks/test',
    auth: { kind: 'key', scope: 'receipts:write' },
    summary: 'Send a signed sample receipt.status_updated to a URL and answer with the outcome',
    body: z.object({ url: z.string().min(1).max(2048) }),
    response: SendOutcome,
    errors: ['invalid_input'],
  }),
  consoleReceiptsList: route({
    name: 'console-receipts-list',
    method: 'GET',
    path: '/api/console/receipts',
    auth: MERCHANT_SESSION,
    summary: 'The merchant console: your receipts, newest first, a page at a time (GET /api/receipts by session)',
    query: ReceiptListQuery,
    response: ReceiptListAnswer,
    errors: ['invalid_input'],
  }),
  consoleReceiptsGet: route({
    name: 'console-receipts-get',
    method: 'GET',
    path: '/api/console/receipts/{id}',
    auth: MERCHANT_SESSION,
    summary: 'The merchant console: one of your receipts (GET /api/receipts/{id} by session)',
    params: { id: Id },
    response: ReceiptDetailView,
    errors: ['not_found'],
  }),
  consoleReceiptsDeliveries: route({
    name: 'console-receipts-deliveries',
    method: 'GET',
    path: '/api/console/receipts/{id}/deliveries',
    auth: MERCHANT_SESSION,
    summary: "The merchant console: the receipt's webhook delivery log and signing key (GET /api/receipts/{id}/deliveries by session)",
    params: { id: Id },
    response: DeliveryLogAnswer,
    errors: ['not_found'],
  }),
  consoleReceiptsRedeliver: route({
    name: 'console-receipts-redeliver',
    method: 'POST',
    path: '/api/console/receipts/{id}/deliveries/{eventId}/redeliver',
    auth: MERCHANT_SESSION,
    summary: 'The merchant console: send a logged event again now (POST /api/receipts/{id}/deliveries/{eventId}/redeliver by session)',
    params: { id: Id, eventId: Id },
    response: RedeliveryAnswer,
    errors: ['not_found', 'conflict'],
  }),
  consoleReceiptsTerminal: route({
    name: 'console-receipts-terminal',
    method: 'POST',
    path: '/api/console/receipts/terminal',
    auth: MERCHANT_SESSION,
    summary: "The merchant console's point of sale: an amount becomes a receipt with its payment link and QR code, its webhooks signed by your webhook signing secret (POST /api/receipts/terminal by session)",
    body: TerminalSale,
    response: TerminalAnswer,
    successStatus: 201,
    errors: ['invalid_input', 'split_required'],
  }),
  consoleInventoryUpsert: route({
    name: 'console-inventory-upsert',
    method: 'POST',
    path: '/api/console/inventory',
    auth: MERCHANT_SESSION,
    summary: 'The merchant console: create or replace an inventory item, matched by id, else by sku (POST /api/inventory by session)',
    body: InventoryUpsertInput,
    response: orDegradedBody(z.object({ ok: z.literal(true), item: InventoryItem })),
    errors: ['invalid_input', 'not_found', 'conflict'],
  }),
  consoleInventoryDelete: route({
    name: 'console-inventory-delete',
    method: 'DELETE',
    path: '/api/console/inventory',
    auth: MERCHANT_SESSION,
    summary: 'The merchant console: delete an inventory item (DELETE /api/inventory by session)',
    query: InventoryDeleteQuery,
    response: orDegradedBody(z.object({ ok: z.literal(true), id: z.string() })),
    errors: ['id_required', 'not_found'],
  }),
  consoleWebhooksTest: route({
    name: 'console-webhooks-test',
    method: 'POST',
    path: '/api/console/webhooks/test',
    auth: MERCHANT_SESSION,
    summary: 'The merchant console: send a signed sample event to a URL, signed by keyId or your webhook signing secret (POST /api/webhooks/test by session)',
    body: z.object({ url: z.string().min(1).max(2048), keyId: Id.optional().describe('the active key that signs it; default your webhook signing secret') }),
    response: SendOutcome,
    errors: ['invalid_input'],
  }),
  consoleWebhookSecretRotate: route({
    name: 'console-webhook-secret-rotate',
    method: 'POST',
    path: '/api/console/webhooks/secret/rotate',
    auth: MERCHANT_SESSION,
    summary: 'The merchant console: a new webhook signing secret (the first one, when there is none), shown once; the one it replaces still signs beside it for 24 hours',
    response: z.object({ ok: z.literal(true), webhookSecret: z.string().describe('the new secret, shown this once'), signingSecret: WebhookSigningView }),
    errors: [],
  }),
  consoleDepositsSweep: route({
    name: 'console-deposits-sweep',
    method: 'POST',
    path: '/api/console/deposits/sweep',
    auth: MERCHANT_SESSION,
    summary:
      "The merchant console: the DepositFactory.sweepMany your own wallet sends to move what waits at your receipts' deposit addresses into their splits (paid receipts' accepted tokens, or a token to recover); the service sends nothing",
    body: DepositSweepRequest,
    response: DepositSweepAnswer,
    errors: ['invalid_input', 'not_found', 'service_unavailable'],
  }),
  openapi: route({
    name: 'openapi',
    method: 'GET',
    path: '/api/openapi.json',
    auth: { kind: 'public' },
    summary: 'This OpenAPI 3.1 document',
    response: z.record(z.string(), z.unknown()),
    errors: [],
  }),
  authMe: route({
    name: 'auth-me',
    method: 'GET',
    path: '/api/auth/me',
    auth: { kind: 'session', role: 'merchant' },
    summary: 'The signed-in wallet, its roles and when the session ends',
    response: SessionView,
    errors: [],
  }),
  healthz: route({
    name: 'healthz',
    method: 'GET',
    path: '/healthz',
    auth: { kind: 'public' },
    summary: 'Health probe: the service and its dependencies',
    response: HealthResponse,
    errors: [],
  }),
  receiptSigner: route({
    name: 'receipt-signer',
    method: 'GET',
    path: '/.well-known/receipt-signer',
    auth: { kind: 'public' },
    summary: 'The address receipt proofs are signed by, the chain and the EIP-712 domain: what a verifier pins',
    response: ReceiptSignerView,
    errors: ['service_unavailable'],
  }),
  inventoryList: route({
    name: 'inventory-list',
    method: 'GET',
    path: '/api/inventory',
    auth: { kind: 'key', scope: 'inventory:read' },
    summary: "List the merchant's inventory with search, filters, sort and pages",
    query: InventoryListQuery,
    response: InventoryListResponse,
    errors: ['invalid_input'],
  }),
  inventoryUpsert: route({
    name: 'inventory-upsert',
    method: 'POST',
    path: '/api/inventory',
    auth: { kind: 'key', scope: 'inventory:write' },
    summary: 'Create or replace an inventory item (matched by id, else by sku)',
    body: InventoryUpsertInput,
    response: orDegradedBody(z.object({ ok: z.literal(true), item: InventoryItem })),
    errors: ['invalid_input', 'not_found', 'conflict'],
  }),
  inventoryDelete: route({
    name: 'inventory-delete',
    method: 'DELETE',
    path: '/api/inventory',
    auth: { kind: 'key', scope: 'inventory:write' },
    summary: 'Delete an inventory item',
    query: InventoryDeleteQuery,
    response: orDegradedBody(z.object({ ok: z.literal(true), id: z.string() })),
    errors: ['id_required', 'not_found'],
  }),
  portalPage: route({
    name: 'portal-page',
    method: 'GET',
    path: '/portal/{id}',
    auth: { kind: 'portal' },
    responseKind: 'html',
    summary: "The buyer's payment page for a receipt (server-rendered; a small script adds wallet payment)",
    response: z.string(),
    errors: ['not_found'],
  }),
  payPage: route({
    name: 'pay-page',
    method: 'GET',
    path: '/pay/{id}',
    auth: { kind: 'portal' },
    responseKind: 'html',
    summary: 'The payment link of a receipt: the same page as /portal/{id}',
    response: z.string(),
    errors: ['not_found'],
  }),
  splitRegister: route({
    name: 'split-register',
    method: 'POST',
    path: '/api/split/register',
    auth: { kind: 'session', role: 'merchant' },
    summary: "Record the split you deployed from your own wallet (the factory's createSplit with today's payees): checked on chain, no relayer gas",
    response: z.object({ ok: z.literal(true), split: SplitView }),
    errors: ['platform_recipient_not_configured', 'not_found', 'conflict', 'service_unavailable'],
  }),
  adminHome: route({
    name: 'admin-home',
    method: 'GET',
    path: '/console',
    auth: { kind: 'session', role: 'merchant', optional: true },
    responseKind: 'html',
    summary: "The merchant console's overview (server-rendered for the signed-in wallet; without a session, the sign-in page)",
    query: AdminPageQuery,
    response: z.string(),
    errors: ['invalid_input'],
  }),
  adminPage: route({
    name: 'admin-page',
    method: 'GET',
    path: '/console/{page}',
    auth: { kind: 'session', role: 'merchant', optional: true },
    responseKind: 'html',
    summary: 'A page of the merchant console: split, inventory, settings, keys, receipts, terminal, webhooks (without a session, the sign-in page)',
    query: AdminPageQuery,
    response: z.string(),
    errors: ['invalid_input', 'not_found'],
  }),
  adminAsset: route({
    name: 'admin-asset',
    method: 'GET',
    path: '/console/assets/{file}',
    auth: { kind: 'public' },
    responseKind: 'asset',
    assetTypes: ['text/javascript', 'text/css'],
    summary: "The console's script and stylesheet (content-hashed names, cached for a year)",
    response: z.string(),
    errors: ['not_found'],
  }),
  portalAsset: route({
    name: 'portal-asset',
    method: 'GET',
    path: '/portal/assets/{file}',
    auth: { kind: 'public' },
    responseKind: 'asset',
    assetTypes: ['text/javascript', 'text/css'],
    summary: "The portal's script and stylesheet (content-hashed names, cached for a year)",
    response: z.string(),
    errors: ['not_found'],
  }),
  portalGet: route({
    name: 'portal-get',
    method: 'GET',
    path: '/api/portal/{id}',
    auth: { kind: 'portal' },
    summary: "The buyer's view of a receipt: lines, totals, status, tokens, the open quote and the payment",
    params: { id: Id },
    response: PortalView,
    errors: ['not_found'],
  }),
  portalQuote: route({
    name: 'portal-quote',
    method: 'POST',
    path: '/api/portal/{id}/quote',
    auth: { kind: 'portal' },
    summary: 'Fix what the buyer pays in a token for 10 minutes: an amount unique to this receipt, and an EIP-681 URI',
    params: { id: Id },
    body: QuoteRequest,
    response: z.object({ ok: z.literal(true), quote: QuoteView }),
    errors: ['not_found', 'invalid_input', 'unsupported_token', 'price_stale', 'receipt_not_payable', 'split_required', 'service_unavailable'],
  }),
  portalQr: route({
    name: 'portal-qr',
    method: 'GET',
    path: '/api/portal/{id}/qr.svg',
    auth: { kind: 'portal' },
    responseKind: 'asset',
    assetTypes: ['image/svg+xml'],
    summary: "QR code (SVG) of the receipt's open quote as an EIP-681 URI (`?token=`), or of its payment link",
    params: { id: Id },
    query: z.object({ token: z.preprocess(blankAsAbsent, QuoteRequest.shape.token.optional()) }),
    response: z.string(),
    errors: ['not_found', 'invalid_input'],
  }),
  portalEvents: route({
    name: 'portal-events',
    method: 'POST',
    path: '/api/portal/{id}/events',
    auth: { kind: 'portal' },
    summary: "The page's tracking statuses (link_opened … checkout_success) and its last error, never paid or failed",
    params: { id: Id },
    body: PortalEvent,
    response: z.object({ ok: z.literal(true), status: z.string(), ignored: z.literal(true).optional(), reason: z.string().optional() }),
    errors: ['not_found', 'invalid_input'],
  }),
  portalPayments: route({
    name: 'portal-payments',
    method: 'POST',
    path: '/api/portal/{id}/payments',
    auth: { kind: 'portal' },
    summary: 'Report the hash of a payment transaction: the service verifies it on chain and decides paid',
    params: { id: Id },
    body: PaymentSubmission,
    response: PaymentAnswer,
    errors: ['not_found', 'invalid_input', 'transaction_not_found', 'transaction_already_used', 'not_a_payment', 'service_unavailable'],
  }),
  portalOnramp: route({
    name: 'portal-onramp',
    method: 'POST',
    path: '/api/portal/{id}/onramp',
    auth: { kind: 'portal' },
    summary: "Pay by card: a card on-ramp session that delivers the receipt's USDC quote to the merchant's split (redirect_url goes to the session)",
    params: { id: Id },
    response: OnrampAnswer,
    errors: ['not_found', 'unsupported_token', 'price_stale', 'receipt_not_payable', 'split_required', 'onramp_refused', 'conflict', 'service_unavailable'],
  }),
  onrampWebhook: route({
    name: 'onramp-webhook',
    method: 'POST',
    path: '/api/onramp/{provider}/webhook',
    auth: { kind: 'public' },
    summary: "A card on-ramp provider's events, signed with its own scheme: tracking statuses and failures of card payments, each applied once",
    body: z.looseObject({}),
    response: z.union([
      z.object({ ok: z.literal(true), applied: z.literal(true), status: z.string() }),
      z.object({ ok: z.literal(true), applied: z.literal(false), reason: z.string() }),
    ]),
    errors: ['not_found', 'invalid_input', 'invalid_signature', 'conflict', 'service_unavailable'],
  }),
  onrampSandboxPage: route({
    name: 'onramp-sandbox-page',
    method: 'GET',
    path: '/onramp/sandbox/{session}',
    auth: { kind: 'public' },
    responseKind: 'html',
    summary: "The sandbox on-ramp's checkout page: a tester picks the card payment's outcome",
    params: { session: Id },
    response: z.string(),
    errors: ['not_found'],
  }),
  onrampSandboxFinish: route({
    name: 'onramp-sandbox-finish',
    method: 'POST',
    path: '/onramp/sandbox/{session}',
    auth: { kind: 'public' },
    responseKind: 'html',
    summary: "The sandbox checkout's form: plays the outcome picked (success sends the test USDC), then redirects (303) to the receipt's redirect_url or payment page",
    params: { session: Id },
    body: z.object({ outcome: z.string().min(1).max(64) }),
    formBody: true,
    response: z.string(),
    successStatus: 303,
    errors: ['not_found', 'invalid_input', 'conflict'],
  }),
  portalProof: route({
    name: 'portal-proof',
    method: 'GET',
    path: '/api/portal/{id}/proof',
    auth: { kind: 'portal' },
    summary: "The buyer's copy of the receipt's signed proof (the portal's Download receipt): the same document as GET /api/receipts/{id}/proof",
    params: { id: Id },
    response: ReceiptProofView,
    errors: ['not_found', 'receipt_not_paid', 'conflict', 'service_unavailable'],
  }),
  receiptsRefund: route({
    name: 'receipts-refund',
    method: 'POST',
    path: '/api/receipts/refund',
    auth: { kind: 'session', role: 'merchant' },
    summary: 'Ask to refund a paid receipt (all, or amountUsd): answers what to send from your wallet to the payer',
    body: z.object({
      id: Id,
      amountUsd: usdAmount.refine((usd) => usd > 0, 'must be above 0').optional(),
      reason: z.string().trim().max(500).optional(),
    }),
    response: z.object({ ok: z.literal(true), receiptId: z.string(), status: z.string(), refund: RefundView }),
    errors: ['not_found', 'invalid_input', 'refund_too_large', 'refund_through_provider', 'receipt_not_payable', 'conflict'],
  }),
  receiptsRefundReport: route({
    name: 'receipts-refund-report',
    method: 'POST',
    path: '/api/receipts/refund/transaction',
    auth: { kind: 'session', role: 'merchant' },
    summary: "Report the hash of a refund you sent: verified on chain, then the receipt is refunded",
    body: z.object({ id: Id, txHash: PaymentSubmission.shape.txHash }),
    response: z.object({ ok: z.literal(true), receiptId: z.string(), status: z.string(), outcome: z.enum(['refunded', 'unconfirmed', 'pending']) }),
    errors: ['not_found', 'invalid_input', 'transaction_not_found', 'transaction_already_used', 'not_a_payment', 'conflict', 'service_unavailable'],
  }),
  receiptsTerminal: route({
    name: 'receipts-terminal',
    method: 'POST',
    path: '/api/receipts/terminal',
    auth: { kind: 'key', scope: 'receipts:write' },
    summary: 'Point of sale: an amount becomes a receipt (one line, Tax, Processing Fee) with its payment link and QR code',
    body: TerminalSale,
    response: TerminalAnswer,
    successStatus: 201,
    errors: ['invalid_input', 'split_required'],
  }),
  x402Orders: route({
    name: 'x402-orders',
    method: 'POST',
    path: '/api/x402/orders',
    auth: { kind: 'x402' },
    summary: "An agent's order from a shop by slug, paid in USDC by x402: 402 with the challenge, then with a payment proof a paid receipt",
    // Checked by the use case, so an order that cannot be priced answers its 4xx before any challenge.
    body: OrderBody,
    documentedBody: X402OrderRequest,
    response: X402ReceiptAnswer,
    errors: ['not_found', 'split_required', 'items_required', 'inventory_item_not_found', 'insufficient_stock', 'invalid_input', 'payment_required', 'conflict', 'service_unavailable'],
  }),
  x402Subscribe: route({
    name: 'x402-subscribe',
    method: 'POST',
    path: '/api/x402/subscribe',
    auth: { kind: 'x402' },
    summary: 'An API key for an agent: starter free with a sign-in-with-x proof (one per wallet), pro and enterprise paid in USDC by x402 for 30 days',
    body: OrderBody,
    documentedBody: X402SubscribeRequest,
    response: SubscriptionResult,
    errors: ['invalid_input', 'unauthorized', 'conflict', 'platform_recipient_not_configured', 'payment_required', 'service_unavailable'],
  }),
};

export const allRoutes: RouteSpec[] = Object.values(routes);

export interface RouteMatch {
  route: RouteSpec;
  params: Record<string, string>;
}

const segmentsOf = (path: string) => path.split('/').filter(Boolean);
/** Each route's path, split once. */
const routeSegments = new WeakMap<RouteSpec, string[]>();
const patternOf = (route: RouteSpec) => {
  let segments = routeSegments.get(route);
  if (!segments) routeSegments.set(route, (segments = segmentsOf(route.path)));
  return segments;
};

/** Finds the route for a method and path; a fixed segment beats a `{param}` in the same place. */
export const matchRoute = (table: RouteSpec[], method: string, pathname: string): RouteMatch | undefined => {
  const wanted = segmentsOf(pathname);
  let best: { match: RouteMatch; fixed: number } | undefined;
  for (const route of table) {
    if (route.method !== method) continue;
    const pattern = patternOf(route);
    if (pattern.length !== wanted.length) continue;
    const params: Record<string, string> = {};
    let fixed = 0;
    const matches = pattern.every((segment, index) => {
      const value = wanted[index]!;
      if (segment.startsWith('{') && segment.endsWith('}')) {
        try {
          params[segment.slice(1, -1)] = decodeURIComponent(value);
        } catch {
          return false;
        }
        return true;
      }
      fixed++;
      return segment === value;
    });
    if (matches && (!best || fixed > best.fixed)) best = { match: { route, params }, fixed };
  }
  return best?.match;
};
