export const WEBHOOK_EVENT = 'receipt.status_updated' as const;
export const WEBHOOK_USER_AGENT = 'Service-Webhook/1.0';
export const WEBHOOK_TIMEOUT_MS = 5_000;
export const WEBHOOK_RETRY_DELAY_S = 5;
export const WEBHOOK_ATTEMPTS = 2;

/** One attempt at delivering an event, as the delivery log keeps it (its id `<eventId>:<attempt>` is claimed before sending). */
export interface DeliveryAttempt {
  id: string;
  receiptId: string;
  wallet: string;
  eventId: string;
  attempt: number;
  target: string;
  body: string;
  /** The API key (subscription) that signed the attempt; null when the shop's webhook signing secret did. */
  signingSubscriptionId: string | null;
  /** The prefix of the shop's webhook signing secret that signed it (absent on attempts logged before such secrets). */
  signingSecretPrefix?: string | null;
  state: 'sending' | 'delivered' | 'failed';
  startedAt: number;
  httpStatus: number | null;
  error: string | null;
  durationMs: number | null;
}

export const attemptId = (eventId: string, attempt: number) => `${eventId}:${attempt}`;

/** The delivery log on the wire: what happened, not the body or the secret. */
export const toAttemptView = (attempt: DeliveryAttempt) => ({
  eventId: attempt.eventId,
  attempt: attempt.attempt,
  target: attempt.target,
  state: attempt.state,
  at: attempt.startedAt,
  httpStatus: attempt.httpStatus,
  error: attempt.error,
  durationMs: attempt.durationMs,
  /** The key (subscription id) that signed the attempt. */
  signedBy: attempt.signingSubscriptionId,
  /** The shop's webhook signing secret that signed it, by its prefix (the current one, during a rotation's overlap). */
  signedWithSecret: attempt.signingSecretPrefix ?? null,
});
