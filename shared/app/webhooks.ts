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
import { toWebhookSigningView } from '../domain/webhook-secret';
import { ID_PATTERN } from '../domain/query-params';
import { queues } from '../registry';
import { DuplicateKeyError } from '../ports/errors';
import type { SendResult } from '../ports/webhooks';
import type { AppDeps } from './deps';
import { loadMerchant } from './merchants';
import type { WebhookMessage } from './receipt-status';
import { openWebhookSecrets } from './webhook-secrets';
import { webhookHeaders } from './webhook-signing';

type DeliveryDeps = Pick<AppDeps, 'deliveries' | 'subscriptions' | 'secretBox' | 'webhookSender' | 'queue' | 'clock' | 'settings' | 'receipts' | 'merchants'>;

/** What signs one attempt: the secret (and, during a rotation's overlap, the one rotated out), and who it belongs to. */
interface Signer {
  /** The API key that signs (its subscription); null: the shop's webhook signing secret does. */
  subscriptionId: string | null;
  /** The webhook signing secret's prefix, when it signs. */
  secretPrefix: string | null;
  secret: string | undefined;
  previousSecret?: string;
}

const NO_SHOP_SECRET = 'no webhook signing secret for this shop: make one in the console (Settings, Webhook), then redeliver';

/** The shop's webhook signing secret(s) now: what signs every receipt no API key created. */
const shopSigner = async (deps: Pick<AppDeps, 'merchants' | 'clock' | 'secretBox'>, wallet: string): Promise<Signer> => {
  const opened = openWebhookSecrets(deps, await loadMerchant(deps, wallet), deps.clock.now());
  return { subscriptionId: null, secretPrefix: opened?.prefix ?? null, secret: opened?.secret, ...(opened?.previousSecret !== undefined && { previousSecret: opened.previousSecret }) };
};

/** The API key that signs a subscription's webhooks (kept encrypted on its record). */
const signingSecret = async (deps: Pick<AppDeps, 'subscriptions' | 'secretBox'>, subscriptionId: string | null): Promise<string | undefined> => {
  const subscription = subscriptionId ? await deps.subscriptions.get(subscriptionId) : undefined;
  return subscription?.signingKey ? deps.secretBox.open(subscription.signingKey) : undefined;
};

/**
 * Who signs an attempt: the event's own key, unless that key is revoked and the receipt has since
 * been rolled to another (POST /api/keys/{id}/roll): then the receipt's key now, so a retry or a
 * redelivery of an event made before the roll verifies with the new key too. Only a revoked key
 * costs the receipt read. A receipt no key created (the console's terminal, an agent's order) is
 * signed by the shop's webhook signing secret at the time of sending, never by one of its keys: a
 * key given to a vendor (read-only, say) must not be able to forge such a receipt's `paid`.
 */
const signerOf = async (deps: DeliveryDeps, message: Pick<WebhookMessage, 'wallet' | 'receiptId' | 'signingSubscriptionId'>): Promise<Signer> => {
  if (!message.signingSubscriptionId) return shopSigner(deps, message.wallet);
  const own = await deps.subscriptions.get(message.signingSubscriptionId);
  if (own?.status === 'revoked') {
    const current = (await deps.receipts.get(message.wallet, message.receiptId))?.value.createdBy;
    if (current && current !== own.id) return { subscriptionId: current, secretPrefix: null, secret: await signingSecret(deps, current) };
  }
  return { subscriptionId: message.signingSubscriptionId, secretPrefix: null, secret: own?.signingKey ? deps.secretBox.open(own.signingKey) : undefined };
};

const isDelivered = (result: Pick<SendResult, 'httpStatus'>) => result.httpStatus !== null && result.httpStatus >= 200 && result.httpStatus < 300;

/**
 * Claims attempt N, sends it, logs the outcome. Undefined when attempt N was claimed before. Every
 * read that can fail (the signing key) happens before the claim; after it nothing throws but the
 * caller's retry queueing, so a claimed attempt is never left unsent by an error of ours.
 */
const attemptDelivery = async (deps: DeliveryDeps, message: WebhookMessage): Promise<SendResult | undefined> => {
  const signer = await signerOf(deps, message);
  const signingSubscriptionId = signer.subscriptionId;
  const entry: DeliveryAttempt = {
    id: attemptId(message.eventId, message.attempt),
    receiptId: message.receiptId,
    wallet: message.wallet,
    eventId: message.eventId,
    attempt: message.attempt,
    target: message.target,
    body: message.body,
    signingSubscriptionId,
    signingSecretPrefix: signer.secretPrefix,
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
  const { secret, previousSecret } = signer;
  const result: SendResult = secret
    ? await deps.webhookSender.send({
        url: message.target,
        body: message.body,
        timeoutMs: WEBHOOK_TIMEOUT_MS,
        // Signed now, per attempt: a retry or a redelivery carries its own time, the same bytes.
        headers: webhookHeaders(deps.settings.webhookHeaderPrefix, { eventId: message.eventId, secret, ...(previousSecret !== undefined && { previousSecret }), body: message.body, timestamp: deps.clock.now() }),
      })
    : { httpStatus: null, error: signingSubscriptionId ? 'no signing key for the API key that created this receipt' : NO_SHOP_SECRET, durationMs: 0 };
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
  const stored = ID_PATTERN.test(receiptId) ? await deps.receipts.get(wallet, receiptId) : undefined;
  if (!stored) throw new DomainError('not_found', `receipt ${receiptId} not found`);
  const attempts = await deps.deliveries.listForReceipt(receiptId);
  return { receipt: stored.value, attempts: attempts.sort((a, b) => a.startedAt - b.startedAt || a.attempt - b.attempt) };
};

/**
 * The key that signs the receipt's next events, and whether it is revoked (it still signs them
 * then, as the interface document says, until the merchant rolls the key); null when no key does.
 */
const signingKeyOf = async (deps: Pick<AppDeps, 'subscriptions'>, createdBy: string | null) => {
  const subscription = createdBy ? await deps.subscriptions.get(createdBy) : undefined;
  return subscription ? { id: subscription.id, prefix: subscription.keyPrefix, revoked: subscription.status === 'revoked' } : null;
};

/** The shop's webhook signing secret that signs the receipt's next events when no key does (prefixes and times only). */
const signingSecretOf = async (deps: Pick<AppDeps, 'merchants' | 'clock'>, wallet: string, createdBy: string | null) => {
  if (createdBy) return null;
  const signing = (await loadMerchant(deps, wallet)).webhookSigning;
  return signing ? toWebhookSigningView(signing, deps.clock.now()) : null;
};

export const listDeliveries = async (deps: Pick<AppDeps, 'receipts' | 'deliveries' | 'subscriptions' | 'merchants' | 'clock'>, wallet: string, receiptId: string) => {
  const { receipt, attempts } = await ownReceiptAttempts(deps, wallet, receiptId);
  const [signingKey, signingSecret] = await Promise.all([signingKeyOf(deps, receipt.createdBy), signingSecretOf(deps, wallet, receipt.createdBy)]);
  return { deliveries: attempts.map(toAttemptView), signingKey, signingSecret };
};

/** Sends a logged event again, now, as a new attempt with the same delivery id and the same bytes. */
export const redeliver = async (deps: DeliveryDeps & Pick<AppDeps, 'receipts'>, wallet: string, receiptId: string, eventId: string) => {
  const attempts = (await ownReceiptAttempts(deps, wallet, receiptId)).attempts.filter((attempt) => attempt.eventId === eventId);
  const last = attempts.at(-1);
  if (!last) throw new DomainError('not_found', `event ${eventId} not found for receipt ${receiptId}`);
  for (let extra = 1; extra <= 5; extra++) {
    const attempt = Math.max(...attempts.map((a) => a.attempt)) + extra;
    const result = await attemptDelivery(deps, { ...last, attempt, createdAt: last.startedAt });
    if (result) return { ok: true as const, eventId, attempt, delivered: isDelivered(result), ...result };
  }
  throw new DomainError('conflict', 'another redelivery of this event is under way; try again');
};

/** A test event's URL, under the same target rules as a receipt's. */
const checkTarget = (deps: Pick<AppDeps, 'settings'>, url: string) => {
  const problem = webhookTargetProblem(url, deps.settings.development);
  if (problem) throw new DomainError('invalid_input', `url: ${problem}`, { field: 'url' });
};

/** A signed sample `receipt.status_updated`, sent now to `url` (its target checked by the caller), signed by `signer`. */
const sendSample = async (
  deps: Pick<AppDeps, 'webhookSender' | 'clock' | 'settings'>,
  caller: { wallet: string; subscriptionId: string | null },
  signer: { secret: string; previousSecret?: string },
  url: string,
) => {
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
    headers: webhookHeaders(deps.settings.webhookHeaderPrefix, { eventId, ...signer, body, timestamp: now }),
  });
  return { ok: true as const, eventId, delivered: isDelivered(result), ...result };
};

/** `POST /api/webhooks/test`: the sample signed by the caller's own key, as the receipts it creates are. */
export const sendTestEvent = async (
  deps: Pick<AppDeps, 'webhookSender' | 'secretBox' | 'subscriptions' | 'clock' | 'settings'>,
  caller: { wallet: string; subscriptionId: string },
  url: string,
) => {
  checkTarget(deps, url);
  const secret = await signingSecret(deps, caller.subscriptionId);
  if (!secret) throw new DomainError('invalid_input', 'this API key has no signing key; create a new key', { field: 'key' });
  return sendSample(deps, caller, { secret }, url);
};

/**
 * The console's test event: a session holds no key, so it is signed as the receipts the console
 * makes are, by the shop's webhook signing secret (both, during a rotation's overlap), unless the
 * merchant names one of its active keys (`keyId`) to test what that key's receipts send.
 */
export const sendConsoleTestEvent = async (
  deps: Pick<AppDeps, 'webhookSender' | 'secretBox' | 'subscriptions' | 'clock' | 'settings' | 'merchants'>,
  wallet: string,
  input: { url: string; keyId?: string },
) => {
  checkTarget(deps, input.url);
  if (input.keyId === undefined) {
    const shop = await shopSigner(deps, wallet);
    if (!shop.secret) throw new DomainError('invalid_input', 'keyId: this shop has no webhook signing secret yet; make one in Settings, or name a key', { field: 'keyId' });
    return sendSample(deps, { wallet, subscriptionId: null }, { secret: shop.secret, ...(shop.previousSecret !== undefined && { previousSecret: shop.previousSecret }) }, input.url);
  }
  const named = ID_PATTERN.test(input.keyId) ? await deps.subscriptions.get(input.keyId) : undefined;
  if (named?.wallet !== wallet || named.status !== 'active') throw new DomainError('invalid_input', `keyId: no active key ${input.keyId} of this wallet`, { field: 'keyId' });
  return sendTestEvent(deps, { wallet, subscriptionId: named.id }, input.url);
};
