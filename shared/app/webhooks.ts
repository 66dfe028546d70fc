import { randomUUID } from 'node:crypto';
import { DomainError } from '../domain/errors';
import { newReceipt } from '../domain/receipt';
import {
  WEBHOOK_ATTEMPTS,
  WEBHOOK_RETRY_DELAY_S,
  WEBHOOK_TIMEOUT_MS,
  attemptId,
  toAttemptView,
  type DeliveryAttempt,
} from '../domain/webhook';
import { toWebhookBody } from '../domain/receipt-views';
import { webhookTargetProblem } from '../domain/webhook-target';
import { ID_PATTERN } from '../domain/query-params';
import { queues } from '../registry';
import { DuplicateKeyError } from '../ports/errors';
import type { SendResult } from '../ports/webhooks';
import type { AppDeps } from './deps';
import type { WebhookMessage } from './receipt-status';
import { webhookHeaders } from './webhook-signing';

type DeliveryDeps = Pick<AppDeps, 'deliveries' | 'subscriptions' | 'secretBox' | 'webhookSender' | 'queue' | 'clock' | 'settings'>;

/** The API key that signs a subscription's webhooks (kept encrypted on its record). */
const signingSecret = async (deps: Pick<AppDeps, 'subscriptions' | 'secretBox'>, subscriptionId: string | null): Promise<string | undefined> => {
  const subscription = subscriptionId ? await deps.subscriptions.get(subscriptionId) : undefined;
  return subscription?.signingKey ? deps.secretBox.open(subscription.signingKey) : undefined;
};

const isDelivered = (result: Pick<SendResult, 'httpStatus'>) => result.httpStatus !== null && result.httpStatus >= 200 && result.httpStatus < 300;

/**
 * Claims attempt N, sends it, logs the outcome. Undefined when attempt N was claimed before. Every
 * read that can fail (the signing key) happens before the claim; after it nothing throws but the
 * caller's retry queueing, so a claimed attempt is never left unsent by an error of ours.
 */
const attemptDelivery = async (deps: DeliveryDeps, message: WebhookMessage): Promise<SendResult | undefined> => {
  const secret = await signingSecret(deps, message.signingSubscriptionId);
  const entry: DeliveryAttempt = {
    id: attemptId(message.eventId, message.attempt),
    receiptId: message.receiptId,
    wallet: message.wallet,
    eventId: message.eventId,
    attempt: message.attempt,
    target: message.target,
    body: message.body,
    signingSubscriptionId: message.signingSubscriptionId,
    state: 'sending',
    startedAt: deps.clock.now(),
    httpStatus: null,
    error: null,
    durationMs: null,
  };
  try {
    await deps.deliveries.create(entry.receiptId, entry);
  } catch (error) {
    if (error instanceof DuplicateKeyError) return undefined;
    throw error;
  }
  const result: SendResult = secret
    ? await deps.webhookSender.send({
        url: message.target,
        body: message.body,
        timeoutMs: WEBHOOK_TIMEOUT_MS,
        // Signed now, per attempt: a retry or a redelivery carries its own time, the same bytes.
        headers: webhookHeaders(deps.settings.webhookHeaderPrefix, { eventId: message.eventId, secret, body: message.body, timestamp: deps.clock.now() }),
      })
    : { httpStatus: null, error: 'no signing key for the API key that created this receipt', durationMs: 0 };
  // The log entry stays "sending" if this write fails; the attempt itself is done either way.
  await deps.deliveries
    .upsert(entry.receiptId, { ...entry, state: isDelivered(result) ? 'delivered' : 'failed', httpStatus: result.httpStatus, error: result.error, durationMs: result.durationMs })
    .catch(() => {});
  return result;
};

const queueRetry = (deps: DeliveryDeps, message: WebhookMessage) =>
  deps.queue.send(queues.webhooks, { ...message, attempt: message.attempt + 1 } satisfies WebhookMessage, { delaySeconds: WEBHOOK_RETRY_DELAY_S });

/**
 * The queue-triggered delivery: one attempt per message. It never throws for a failed delivery:
 * after the first failure it queues the one retry, 5 s later; after the second it stops (logged).
 * If queueing the retry fails, the message comes back: its attempt is not sent again, but a logged
 * failure still gets its retry queued (the retry's own claim keeps that from sending twice).
 */
export const deliverWebhook = async (deps: DeliveryDeps, message: WebhookMessage): Promise<void> => {
  const result = await attemptDelivery(deps, message);
  const failed = result ? !isDelivered(result) : (await deps.deliveries.get(message.receiptId, attemptId(message.eventId, message.attempt)))?.value.state === 'failed';
  if (failed && message.attempt < WEBHOOK_ATTEMPTS) await queueRetry(deps, message);
};

const ownReceiptAttempts = async (deps: Pick<AppDeps, 'receipts' | 'deliveries'>, wallet: string, receiptId: string) => {
  if (!ID_PATTERN.test(receiptId) || !(await deps.receipts.get(wallet, receiptId))) throw new DomainError('not_found', `receipt ${receiptId} not found`);
  const attempts = await deps.deliveries.listForReceipt(receiptId);
  return attempts.sort((a, b) => a.startedAt - b.startedAt || a.attempt - b.attempt);
};

export const listDeliveries = async (deps: Pick<AppDeps, 'receipts' | 'deliveries'>, wallet: string, receiptId: string) => ({
  deliveries: (await ownReceiptAttempts(deps, wallet, receiptId)).map(toAttemptView),
});

/** Sends a logged event again, now, as a new attempt with the same delivery id and the same bytes. */
export const redeliver = async (deps: DeliveryDeps & Pick<AppDeps, 'receipts'>, wallet: string, receiptId: string, eventId: string) => {
  const attempts = (await ownReceiptAttempts(deps, wallet, receiptId)).filter((attempt) => attempt.eventId === eventId);
  const last = attempts.at(-1);
  if (!last) throw new DomainError('not_found', `event ${eventId} not found for receipt ${receiptId}`);
  for (let extra = 1; extra <= 5; extra++) {
    const attempt = Math.max(...attempts.map((a) => a.attempt)) + extra;
    const result = await attemptDelivery(deps, { ...last, attempt, createdAt: last.startedAt });
    if (result) return { ok: true as const, eventId, attempt, delivered: isDelivered(result), ...result };
  }
  throw new DomainError('conflict', 'another redelivery of this event is under way; try again');
};

/** A signed sample `receipt.status_updated`, sent now to `url` under the same target rules. */
export const sendTestEvent = async (
  deps: Pick<AppDeps, 'webhookSender' | 'secretBox' | 'subscriptions' | 'clock' | 'settings'>,
  caller: { wallet: string; subscriptionId: string },
  url: string,
) => {
  const problem = webhookTargetProblem(url, deps.settings.development);
  if (problem) throw new DomainError('invalid_input', `url: ${problem}`, { field: 'url' });
  const secret = await signingSecret(deps, caller.subscriptionId);
  if (!secret) throw new DomainError('invalid_input', 'this API key has no signing key; create a new key', { field: 'key' });
  const now = deps.clock.now();
  const sample = newReceipt(
    {
      receiptId: 'R-TEST-EVENT',
      wallet: caller.wallet,
      brandKey: deps.settings.brandKey,
      brandName: deps.settings.brandName,
      status: 'link_opened',
      lineItems: [{ label: 'Sample item', priceUsd: 10 }],
      totalUsd: 10,
      customerTotalUsd: 10,
      jurisdictionCode: null,
      taxRate: null,
      source: 'api',
      createdBy: caller.subscriptionId,
    },
    now,
    { previousStatus: 'pending', metadata: { test: true } },
  );
  const body = JSON.stringify(toWebhookBody(sample, now));
  const eventId = randomUUID();
  const result = await deps.webhookSender.send({
    url,
    body,
    timeoutMs: WEBHOOK_TIMEOUT_MS,
    headers: webhookHeaders(deps.settings.webhookHeaderPrefix, { eventId, secret, body, timestamp: now }),
  });
  return { ok: true as const, eventId, delivered: isDelivered(result), ...result };
};
