import type { DeliveryAttempt } from '../domain/webhook';
import type { DocumentCollection } from './documents';

export interface SendResult {
  /** The receiver's HTTP status, when it answered. */
  httpStatus: number | null;
  /** Why the attempt failed without a 2xx (network error, timeout, refused target, redirect …). */
  error: string | null;
  durationMs: number;
}

/** Sends one webhook attempt: no redirects followed, a time limit, and the target rules at connect time. */
export interface WebhookSender {
  send(input: { url: string; headers: Record<string, string>; body: string; timeoutMs: number }): Promise<SendResult>;
}

/** A message on a Storage queue; `delaySeconds` keeps it invisible that long (the one delayed retry). */
export interface EventQueue {
  send(queue: string, message: unknown, options?: { delaySeconds?: number }): Promise<void>;
}

/**
 * The delivery log, partitioned by receipt id. Creating an attempt claims it (a second create of
 * `<eventId>:<n>` throws DuplicateKeyError, so it is never sent twice).
 */
export interface DeliveryLog extends DocumentCollection<DeliveryAttempt> {
  /** Every attempt of one receipt, in no particular order. */
  listForReceipt(receiptId: string): Promise<DeliveryAttempt[]>;
}

/** Encrypts secrets at rest (AES-256-GCM): the API keys and the shop's webhook signing secret that sign a merchant's webhooks. */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}
