/** Types of webhook-verify.mjs (the receiver-side check of this service's webhooks). */

export declare const DEFAULT_HEADER_PREFIX: 'X-Service-';
export declare const DEFAULT_TOLERANCE_MS: 300000;

export type WebhookVerifyFailure = 'missing_header' | 'bad_format' | 'bad_signature' | 'too_old' | 'in_future' | 'bad_body';

export type WebhookVerifyResult<Event = unknown> =
  | { ok: true; event: Event; timestamp: number; deliveryId: string | null }
  | { ok: false; reason: WebhookVerifyFailure };

/** A fetch `Headers`, or a plain object such as node:http's `request.headers` (names in any case). */
export type WebhookHeaders = { get(name: string): string | null; has(name: string): boolean } | Record<string, string | string[] | number | undefined>;

export interface WebhookVerifyInput {
  /** The request body exactly as received, before any JSON parsing. */
  body: string | Uint8Array | ArrayBuffer;
  headers: WebhookHeaders;
  /** The API key that created the receipt, or the shop's webhook signing secret (`whsec_…`) for a receipt no key created. */
  secret: string;
  /** How far `t` may be from `now`, either side, in ms; exactly this far is accepted. Default 300000 (5 minutes). */
  toleranceMs?: number;
  /** The current time in unix ms. Default `Date.now()`. */
  now?: number;
  /** The service's header prefix (`WEBHOOK_HEADER_PREFIX`). Default `X-Service-`. */
  prefix?: string;
}

/**
 * Checks `<prefix>Signature-Timestamped: t=<unix ms>,v1=<hex HMAC-SHA256 of "<t>.<body>">` in
 * constant time (any of several `v1`, as during a signing secret's rotation, may match), then the age of `t`, then parses the body. Throws a TypeError only for a call that
 * cannot be right (no secret, a negative tolerance, a body that is not bytes).
 */
export declare function verifyWebhook<Event = unknown>(input: WebhookVerifyInput): WebhookVerifyResult<Event>;
