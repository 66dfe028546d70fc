/**
 * A card on-ramp provider: it sells USDC to a buyer by card and delivers it to the merchant's split
 * for a quoted amount, so `paid` still comes from the chain. Its webhooks (signature checked by the
 * adapter with the provider's own scheme) drive only the tracking statuses and `failed`.
 */
export type OnrampProviderName = 'sandbox' | 'stripe';
export const onrampProviderNames = ['sandbox', 'stripe'] as const satisfies readonly OnrampProviderName[];

export interface OnrampSessionRequest {
  receiptId: string;
  /** The USDC quote the session delivers: its exact (tagged) amount is what the watcher matches. */
  quoteId: string;
  /** Where the USDC goes: the merchant's split, lower-case 0x. */
  walletAddress: string;
  chainId: number;
  /** The USDC contract on that chain, lower-case 0x. */
  tokenAddress: string;
  /** USDC to deliver in whole tokens, as the provider takes it ("12.340017"). */
  destinationAmount: string;
  /** The same amount in atomic units. */
  destinationAmountAtomic: string;
  customerTotalUsd: number;
  /** The receipt's `redirect_url`: handed to the provider's session only. */
  redirectUrl: string | null;
  /** The buyer's address, for providers that screen it (null when unknown). */
  customerIp: string | null;
}

export interface OnrampSession {
  /** The provider's id of the session (its webhooks name it). */
  sessionId: string;
  /** Where the portal sends the buyer: the provider's hosted page. */
  redirectTo: string;
  /** A secret an embedded widget needs, when the provider has one. */
  clientSecret: string | null;
}

/**
 * What a provider event says, in the service's terms:
 * - `session_created`: the buyer is in the provider's checkout (→ `checkout_initialized`);
 * - `payment_processing`: the card was charged, delivery is under way (→ `checkout_success`);
 * - `delivered`: the USDC was sent (`transactionHash`): the chain decides `paid`;
 * - `rejected`: declined or refused (→ `failed` with the mapped `PORTAL_*` code).
 */
export type OnrampEventKind = 'session_created' | 'payment_processing' | 'delivered' | 'rejected';

export interface OnrampEvent {
  provider: OnrampProviderName;
  /** The provider's event id: each is applied once. */
  eventId: string;
  sessionId: string;
  kind: OnrampEventKind;
  /** When the provider says it happened (Unix ms). */
  occurredAt: number;
  /** What the buyer's card was charged in USD, when the provider says. */
  sourceAmountUsd: number | null;
  /** The delivery's transaction, once sent. */
  transactionHash: string | null;
  /** The provider's own code for a rejection (kept as `providerErrorCode`). */
  providerErrorCode: string | null;
  /** The provider's support reference. */
  providerRequestId: string | null;
}

/** A webhook whose signature, or timestamp, does not hold: refused, nothing changes. */
export class OnrampSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OnrampSignatureError';
  }
}

/**
 * The provider refuses to open a session for this buyer or amount (a region it does not serve, say):
 * its own code, mapped like a webhook's. Any other failure to open a session means the provider
 * could not be reached or did not answer as expected.
 */
export class OnrampRefusedError extends Error {
  constructor(
    readonly providerCode: string,
    readonly providerRequestId: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'OnrampRefusedError';
  }
}

/** The sandbox's transfer failed; `sent`: it had been broadcast (it may still be mined), so it must not be sent again. */
export class SandboxDeliveryError extends Error {
  constructor(
    readonly sent: boolean,
    message: string,
    readonly hash: string | null = null,
  ) {
    super(message);
    this.name = 'SandboxDeliveryError';
  }
}

export interface OnrampProvider {
  readonly name: OnrampProviderName;
  /** Throws `OnrampRefusedError` when the provider refuses this buyer or amount; anything else it throws means it is unavailable. */
  createSession(request: OnrampSessionRequest): Promise<OnrampSession>;
  /**
   * Verifies a webhook with the provider's own scheme (signature over the exact body, timestamp
   * within the provider's tolerance of `now`) and reads it. Throws `OnrampSignatureError` when it
   * does not verify; answers null for a verified event the service has no use for.
   */
  readWebhook(rawBody: string, headers: { get(name: string): string | null }, now: number): OnrampEvent | null | Promise<OnrampEvent | null>;
}

/** What the sandbox provider says about a session, as its webhook would (the rest is filled in when sent). */
export type SandboxNotice = Pick<OnrampEvent, 'sessionId' | 'kind'> & Partial<Pick<OnrampEvent, 'sourceAmountUsd' | 'transactionHash' | 'providerErrorCode'>> & {
  /** A fixed id makes a repeated notice the same event (a page reloaded); default a fresh one. */
  eventId?: string;
};

/**
 * The sandbox provider's own desk, behind its hosted page: what a real provider does on its side
 * (charging the card, sending the USDC, calling the webhook), done on the local chain.
 */
export interface SandboxDesk {
  /** Signs the notice as the sandbox's webhook and sends it to the service's webhook route; resolves once it was answered 2xx. */
  notify(notice: SandboxNotice): Promise<void>;
  /** Sends test tokens from the sandbox's funded account; resolves with the transaction hash once mined. */
  deliver(token: string, to: string, amountAtomic: string): Promise<string>;
}
