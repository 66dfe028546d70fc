/**
 * Stripe's crypto on-ramp: a Crypto Onramp Session sells the quoted USDC to the buyer on Stripe's
 * hosted page and delivers it to the merchant's split; its `crypto.onramp_session_updated` webhooks
 * drive the tracking statuses. The SDK has no typed resource for the on-ramp, so the session is
 * created through its raw request: the key, the pinned API version, form encoding, idempotency keys
 * and retries still come from the SDK, and webhooks are verified by the SDK's own `constructEvent`.
 */
import Stripe from 'stripe';
import { z } from 'zod';
import { OnrampRefusedError, OnrampSignatureError, type OnrampEvent, type OnrampEventKind, type OnrampProvider, type OnrampSession, type OnrampSessionRequest } from '../../ports/onramp';

export interface StripeOnrampOptions {
  /** `sk_test_…` / `sk_live_…` (or a restricted `rk_…` key): its mode decides which chains it may serve. */
  secretKey: string;
  /** The `whsec_…` secret of the webhook endpoint. */
  webhookSecret: string;
  /** Another API origin (a local fake in tests); default Stripe's own. */
  host?: string;
  port?: number;
  protocol?: 'http' | 'https';
  /** How old a webhook's signed timestamp may be, in seconds; default the SDK's (300). */
  toleranceSeconds?: number;
}

export const STRIPE_SIGNATURE_HEADER = 'stripe-signature';
export const STRIPE_SESSION_EVENT = 'crypto.onramp_session_updated';
const SESSIONS_PATH = '/v1/crypto/onramp_sessions';

/** A webhook whose signature holds but whose body is not the event it claims to be: Stripe's side, not a forgery. */
export class StripeWebhookPayloadError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'StripeWebhookPayloadError';
  }
}

/**
 * A chain as the on-ramp names it: `destination_network` and the key of `wallet_addresses` (Base's
 * is `base_network`, unlike the others). Stripe has no name for a test network: a test-mode key's
 * sessions on `base` deliver on Base Sepolia, so each chain also says which key mode serves it.
 */
interface StripeChain {
  network: 'ethereum' | 'base' | 'polygon' | 'avalanche';
  walletKey: string;
  testnet: boolean;
}

/** EVM chains on which the on-ramp sells USDC. */
const stripeChains: Readonly<Record<number, StripeChain>> = {
  1: { network: 'ethereum', walletKey: 'ethereum', testnet: false },
  137: { network: 'polygon', walletKey: 'polygon', testnet: false },
  8453: { network: 'base', walletKey: 'base_network', testnet: false },
  43114: { network: 'avalanche', walletKey: 'avalanche', testnet: false },
  84532: { network: 'base', walletKey: 'base_network', testnet: true },
};

/** The chain ids this adapter can sell USDC on. */
export const stripeOnrampChainIds = Object.keys(stripeChains).map(Number);

type KeyMode = 'test' | 'live';

const keyModeOf = (secretKey: string): KeyMode => {
  const mode = /^(?:sk|rk)_(test|live)_/.exec(secretKey)?.[1];
  if (mode !== 'test' && mode !== 'live') throw new Error('STRIPE_SECRET_KEY must be a Stripe secret or restricted key (sk_test_…, sk_live_…, rk_test_…, rk_live_…)');
  return mode;
};

/**
 * The chain's on-ramp names, refused when the on-ramp does not serve it or the key's mode does not
 * match: a live key on a test chain would charge a real card and deliver real USDC to an address
 * that only exists on the test chain, and a test key on a live chain would never deliver there.
 */
const chainFor = (chainId: number, mode: KeyMode): StripeChain => {
  const chain = Object.hasOwn(stripeChains, chainId) ? stripeChains[chainId] : undefined;
  if (!chain) throw new Error(`Stripe's crypto on-ramp does not deliver USDC on chain ${chainId} (supported: ${stripeOnrampChainIds.join(', ')})`);
  if (chain.testnet !== (mode === 'test')) {
    throw new Error(`chain ${chainId} is a ${chain.testnet ? 'test' : 'live'} network but STRIPE_SECRET_KEY is a ${mode}-mode key`);
  }
  return chain;
};

/**
 * The session's parameters: the quoted USDC amount on the receipt's chain to the merchant's split,
 * network, currency and wallet locked so the buyer cannot send it elsewhere, paid in USD.
 */
const sessionParams = (request: OnrampSessionRequest, chain: StripeChain) => ({
  wallet_addresses: { [chain.walletKey]: request.walletAddress },
  lock_wallet_address: true,
  destination_networks: [chain.network],
  destination_network: chain.network,
  destination_currencies: ['usdc'],
  destination_currency: 'usdc',
  destination_amount: request.destinationAmount,
  source_currency: 'usd',
  metadata: { receiptId: request.receiptId, quoteId: request.quoteId },
  ...(request.customerIp && { customer_ip_address: request.customerIp }),
  ...(request.redirectUrl && { redirect_url: request.redirectUrl }),
});

const CreatedSession = z.object({
  id: z.string().min(1),
  client_secret: z.string().min(1),
  redirect_url: z.string().nullish(),
});

const toSession = (answer: unknown): OnrampSession => {
  const parsed = CreatedSession.safeParse(answer);
  if (!parsed.success) throw new Error(`Stripe answered the on-ramp session's creation with an unexpected body: ${parsed.error.message}`);
  const { id, client_secret, redirect_url } = parsed.data;
  // The hosted page is the only way this service sends a buyer to Stripe.
  if (!redirect_url) throw new Error(`Stripe's on-ramp session ${id} has no redirect_url: is the Stripe-hosted onramp enabled for this account?`);
  return { sessionId: id, redirectTo: redirect_url, clientSecret: client_secret };
};

/** The session statuses, as the service's event kinds (a status Stripe adds later is of no use yet). */
const kindsByStatus: Readonly<Record<string, OnrampEventKind>> = {
  initialized: 'session_created',
  requires_payment: 'session_created',
  fulfillment_processing: 'payment_processing',
  fulfillment_complete: 'delivered',
  rejected: 'rejected',
};

const SessionEvent = z.object({
  id: z.string().min(1).max(255),
  created: z.number().int().positive(),
  request: z.object({ id: z.string().nullish() }).nullish(),
  data: z.object({
    object: z.object({
      id: z.string().min(1).max(255),
      status: z.string().min(1),
      transaction_details: z
        .object({
          source_amount: z.string().nullish(),
          source_currency: z.string().nullish(),
          transaction_id: z.string().nullish(),
          // Not in the documented session object: read when a session carries it.
          last_error: z.object({ code: z.string().nullish() }).nullish(),
        })
        .nullish(),
    }),
  }),
});

type SessionEvent = z.infer<typeof SessionEvent>;
type TransactionDetails = NonNullable<SessionEvent['data']['object']['transaction_details']>;

/** What the card paid, when Stripe states it in USD (`source_amount` is a decimal string). */
const sourceAmountUsd = (details: TransactionDetails | null | undefined): number | null => {
  if (details?.source_currency !== 'usd' || !details.source_amount) return null;
  const amount = Number(details.source_amount);
  return Number.isFinite(amount) && amount >= 0 ? amount : null;
};

/** The delivery's hash, on the EVM chains this adapter serves; anything else is no hash of theirs. */
const transactionHash = (details: TransactionDetails | null | undefined): string | null => {
  const id = details?.transaction_id;
  return id && /^0x[0-9a-fA-F]{64}$/.test(id) ? id.toLowerCase() : null;
};

const toEvent = (event: SessionEvent, kind: OnrampEventKind): OnrampEvent => {
  const session = event.data.object;
  const details = session.transaction_details;
  return {
    provider: 'stripe',
    eventId: event.id,
    sessionId: session.id,
    kind,
    occurredAt: event.created * 1000,
    sourceAmountUsd: sourceAmountUsd(details),
    transactionHash: transactionHash(details),
    providerErrorCode: kind === 'rejected' ? (details?.last_error?.code ?? null) : null,
    providerRequestId: event.request?.id ?? session.id,
  };
};

/**
 * The verified event. The SDK throws its `StripeSignatureVerificationError` for a missing or
 * malformed header, a signature that does not match the body with this secret, and a timestamp
 * older than the tolerance; after verifying it parses the body, and that throwing means Stripe
 * signed something that is not JSON.
 */
const verifiedEvent = (rawBody: string, header: string, secret: string, tolerance: number, now: number): unknown => {
  try {
    return Stripe.webhooks.constructEvent(rawBody, header, secret, tolerance, undefined, now);
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) throw new OnrampSignatureError(`Stripe webhook refused: ${error.message.split('\n')[0]}`);
    throw new StripeWebhookPayloadError('a Stripe webhook with a valid signature is not a readable event', { cause: error });
  }
};

const EventType = z.object({ type: z.string() });

/**
 * The Stripe on-ramp. A webhook that does not verify throws `OnrampSignatureError`; a verified one
 * that is not an on-ramp session update, or names a status the service has no use for, answers
 * null; a verified update that cannot be read throws `StripeWebhookPayloadError` (so the endpoint
 * fails and Stripe sends it again, rather than the event being acknowledged and lost).
 */
export const stripeOnramp = (options: StripeOnrampOptions): OnrampProvider => {
  const mode = keyModeOf(options.secretKey);
  const tolerance = options.toleranceSeconds ?? Stripe.webhooks.DEFAULT_TOLERANCE;
  // 0 would switch the SDK's timestamp check off.
  if (!Number.isInteger(tolerance) || tolerance <= 0) throw new Error('toleranceSeconds must be a positive whole number of seconds');
  if (!options.webhookSecret.trim()) throw new Error('STRIPE_WEBHOOK_SECRET must not be empty');
  const stripe = new Stripe(options.secretKey, {
    ...(options.host !== undefined && { host: options.host }),
    ...(options.port !== undefined && { port: options.port }),
    ...(options.protocol !== undefined && { protocol: options.protocol }),
  });

  return {
    name: 'stripe',
    createSession: async (request) => {
      const chain = chainFor(request.chainId, mode);
      let answer: unknown;
      try {
        answer = await stripe.rawRequest('POST', SESSIONS_PATH, sessionParams(request, chain));
      } catch (error) {
        // A refusal of this request with Stripe's code (a customer it cannot serve, an amount out of
        // bounds): the service maps it; anything else (auth, network, 5xx) is Stripe being unavailable.
        if (error instanceof Stripe.errors.StripeError && error.type === 'StripeInvalidRequestError' && error.code && error.statusCode === 400) {
          throw new OnrampRefusedError(error.code, error.requestId ?? null, error.message);
        }
        throw error;
      }
      return toSession(answer);
    },
    readWebhook: (rawBody, headers, now) => {
      const header = headers.get(STRIPE_SIGNATURE_HEADER);
      if (!header) throw new OnrampSignatureError(`Stripe webhook refused: no ${STRIPE_SIGNATURE_HEADER} header`);
      const event = verifiedEvent(rawBody, header, options.webhookSecret, tolerance, now);
      const type = EventType.safeParse(event);
      if (!type.success) throw new StripeWebhookPayloadError(`a signed Stripe webhook has no event type: ${type.error.message}`);
      if (type.data.type !== STRIPE_SESSION_EVENT) return null;
      const parsed = SessionEvent.safeParse(event);
      if (!parsed.success) throw new StripeWebhookPayloadError(`a signed ${STRIPE_SESSION_EVENT} event cannot be read: ${parsed.error.message}`);
      const { status } = parsed.data.data.object;
      if (!Object.hasOwn(kindsByStatus, status)) return null;
      return toEvent(parsed.data, kindsByStatus[status]!);
    },
  };
};
