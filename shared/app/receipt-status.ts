import { z } from 'zod';
import { randomUUID } from 'node:crypto';
import { DomainError } from '../domain/errors';
import { GENERIC_FAILURE, failureInfo, isFailureCode, isSessionFailure } from '../domain/failures';
import type { Receipt, ReceiptFailure, ReceiptStatus, StatusActor, WebhookEvent } from '../domain/receipt';
import { decideTransition, mayRequest } from '../domain/receipt-status';
import { toWebhookBody } from '../domain/receipt-views';
import { queues } from '../registry';
import type { AppDeps } from './deps';
import { withEtagRetry } from './etag-retry';
import { loadMerchant } from './merchants';
import { proofAtPaid } from './receipt-signing';
import { refuseIfNewer } from './write-order';

/** With the receipt signer and settings (every composition has them), a `paid` change carries its signed proof. */
type StatusDeps = Pick<AppDeps, 'receipts' | 'merchants' | 'queue' | 'clock'> & Partial<Pick<AppDeps, 'receiptSigner' | 'settings'>>;

export interface StatusRequest {
  wallet: string;
  receiptId: string;
  status: ReceiptStatus;
  actor: StatusActor;
  failure?: { code: string; providerErrorCode?: string | null; providerRequestId?: string | null };
  /** When the request was accepted, if earlier than now (an outbox entry): a receipt changed since is not moved. */
  acceptedAt?: number;
  /**
   * A precondition read on the receipt as it is about to be written (inside the ETag retry): a
   * reason answers the request as ignored and writes nothing (an event applied already, say).
   */
  guard?: (current: Receipt) => string | null;
  /** Payment facts that come with the change (set by the service: hash, buyer, token). */
  facts?: Partial<Pick<Receipt, PaymentFact>> | ((current: Receipt) => Partial<Pick<Receipt, PaymentFact>>);
}

/** Receipt fields a status change may set with it (only the service's use cases pass them). */
type PaymentFact =
  | 'transactionHash'
  | 'buyerWallet'
  | 'token'
  | 'onrampSessionId'
  | 'onrampSourceAmountUsd'
  | 'isOnrampSessionUnique'
  | 'onramp'
  | 'quotes'
  | 'payments'
  | 'amountPaid'
  | 'amountOverpaid'
  | 'paidAt'
  | 'stock'
  | 'refunds'
  | 'reconciledTxHash';

export type StatusOutcome = { ok: true; receipt: Receipt; ignored?: undefined } | { ok: true; ignored: true; reason: string; receipt: Receipt };

/** Unknown provider codes become the generic code, keeping the provider's own code. */
const failureOf = (failure: StatusRequest['failure']): ReceiptFailure => {
  const known = failure && isFailureCode(failure.code);
  const code = known ? failure.code : GENERIC_FAILURE;
  const info = failureInfo(code as Parameters<typeof failureInfo>[0]);
  return {
    failureCode: code,
    failureCategory: info.category,
    failureReason: info.reason,
    failureAction: info.action,
    providerErrorCode: failure?.providerErrorCode ?? (known ? null : (failure?.code ?? null)),
    providerRequestId: failure?.providerRequestId ?? null,
  };
};

/**
 * The one way a receipt's status changes. Checks who may ask (403), applies the receipt state
 * machine of shared/domain/receipt-status.ts (anything else is answered as ignored, with the
 * reason), and writes the change, its history entry and its `receipt.status_updated` event
 * together under the receipt's ETag. The event is queued right after; the events relay queues any a
 * failure left behind.
 */
export const changeStatus = async (deps: StatusDeps, request: StatusRequest): Promise<StatusOutcome> => {
  if (request.status === 'failed' && request.actor !== 'service') {
    const code = request.failure?.code;
    if (!code || !isFailureCode(code) || !isSessionFailure(code)) {
      throw new DomainError('forbidden', 'a merchant may report only session failures (PORTAL_SESSION_*)');
    }
  }
  if (!mayRequest(request.actor, request.status, true)) throw new DomainError('forbidden', `${request.status} is set by the service itself`);

  return withEtagRetry<StatusOutcome>(
    async ({ write }) => {
      const stored = await deps.receipts.get(request.wallet, request.receiptId);
      if (!stored) throw new DomainError('not_found', `receipt ${request.receiptId} not found`);
      const current = stored.value;
      refuseIfNewer(current.updatedAt, request.acceptedAt, `receipt ${current.receiptId}`);
      const refusal = request.guard?.(current);
      if (refusal) return { ok: true, ignored: true, reason: refusal, receipt: current };
      const decision = decideTransition(current.status, request.status);
      if (!decision.apply) return { ok: true, ignored: true, reason: decision.reason, receipt: current };

      const now = Math.max(deps.clock.now(), current.updatedAt);
      const next: Receipt = {
        ...current,
        ...(typeof request.facts === 'function' ? request.facts(current) : request.facts),
        status: request.status,
        previousStatus: current.status,
        failure: request.status === 'failed' ? failureOf(request.failure) : null,
        statusHistory: [...current.statusHistory, { status: request.status, previousStatus: current.status, at: now, by: request.actor, failureCode: request.status === 'failed' ? failureOf(request.failure).failureCode : null }],
        updatedAt: now,
      };
      // Every way to `paid` passes here: the proof is signed over the facts written with it, once.
      if (request.status === 'paid') next.proof = await proofAtPaid(deps, next);
      const target = current.webhookUrl ?? (await loadMerchant(deps, current.wallet)).shop.webhookUrl;
      if (target) {
        const event: WebhookEvent = {
          eventId: randomUUID(),
          receiptId: current.receiptId,
          wallet: current.wallet,
          target,
          body: JSON.stringify(toWebhookBody(next, now)),
          signingSubscriptionId: current.createdBy,
          createdAt: now,
        };
        next.pendingEvents = [...current.pendingEvents, event];
      }
      await write(() => deps.receipts.replace(request.wallet, next, stored.etag));
      if (next.pendingEvents.length > 0) await flushEvents(deps, request.wallet, request.receiptId).catch(() => {});
      return { ok: true, receipt: next };
    },
    {
      exhausted: () => {
        throw new DomainError('conflict', 'the receipt kept changing; try again');
      },
    },
  );
};

/** What a queued webhook message carries: everything delivery needs, so it reads no receipt. */
export interface WebhookMessage extends WebhookEvent {
  attempt: number;
}

/**
 * Queues the receipt's pending events, then removes them from the receipt. A failure leaves them
 * in place for the relay; an event may then be queued twice, and delivery's per-attempt claim sends it once.
 */
export const flushEvents = async (deps: Pick<AppDeps, 'receipts' | 'queue'>, wallet: string, receiptId: string): Promise<number> => {
  const stored = await deps.receipts.get(wallet, receiptId);
  const pending = stored?.value.pendingEvents ?? [];
  if (pending.length === 0) return 0;
  for (const event of pending) await deps.queue.send(queues.webhooks, { ...event, attempt: 1 } satisfies WebhookMessage);
  const sent = new Set(pending.map((event) => event.eventId));
  // Every way out answers how many were queued: removing them from the receipt is tidying up (the
  // relay would queue them again, and delivery sends each attempt once).
  return withEtagRetry(
    async ({ write }) => {
      const latest = await deps.receipts.get(wallet, receiptId);
      if (!latest) return pending.length;
      const remaining = latest.value.pendingEvents.filter((event) => !sent.has(event.eventId));
      if (remaining.length === latest.value.pendingEvents.length) return pending.length;
      await write(() => deps.receipts.replace(wallet, { ...latest.value, pendingEvents: remaining }, latest.etag));
      return pending.length;
    },
    { exhausted: () => pending.length },
  );
};

/** The timer's work: queue the events a failed queue call left in receipts. */
export const relayPendingEvents = async (deps: Pick<AppDeps, 'receipts' | 'queue'>, limit = 100): Promise<number> => {
  let relayed = 0;
  for (const receipt of await deps.receipts.withPendingEvents(limit)) {
    relayed += await flushEvents(deps, receipt.wallet, receipt.receiptId).catch(() => 0);
  }
  return relayed;
};

export const WebhookMessageSchema = z.object({
  eventId: z.string().min(1),
  receiptId: z.string().min(1),
  wallet: z.string().min(1),
  target: z.string().min(1),
  body: z.string().min(2),
  signingSubscriptionId: z.string().nullable(),
  createdAt: z.number(),
  attempt: z.number().int().min(1),
});
