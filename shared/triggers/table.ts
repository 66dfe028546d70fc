import type { z } from 'zod';
import { OutboxEntry } from '../app/outbox';
import { WebhookMessageSchema } from '../app/receipt-status';
import { queues } from '../registry';

/**
 * The one description of the queue- and timer-triggered functions, beside the route table: it feeds
 * the `app.storageQueue` / `app.timer` registrations, the local host's triggers and the infrastructure
 * checks (every queue a trigger reads exists, with its poison queue).
 */
export interface QueueTriggerSpec<S extends z.ZodType = z.ZodType> {
  kind: 'queue';
  name: string;
  queue: string;
  /** A message that does not parse is a failed run: after maxDequeueCount tries it is poisoned. */
  message: S;
}

export interface TimerTriggerSpec {
  kind: 'timer';
  name: string;
  /** NCRONTAB with seconds (`*\/N * * * * *` runs every N seconds). */
  schedule: string;
  summary: string;
}

export type TriggerSpec = QueueTriggerSpec | TimerTriggerSpec;

export const triggers = {
  webhooksDeliver: { kind: 'queue', name: 'webhooks-deliver', queue: queues.webhooks, message: WebhookMessageSchema },
  outboxApply: { kind: 'queue', name: 'outbox-apply', queue: queues.outbox, message: OutboxEntry },
  eventsRelay: { kind: 'timer', name: 'events-relay', schedule: '*/5 * * * * *', summary: 'queue the status events a queue outage left in receipts' },
  paymentsWatch: { kind: 'timer', name: 'payments-watch', schedule: '*/1 * * * * *', summary: 'match token and ETH transfers into splits with open quotes, and refunds, to receipts (from a block cursor, behind the confirmation depth); finish stock commits cut short' },
  receiptsExpire: { kind: 'timer', name: 'receipts-expire', schedule: '*/30 * * * * *', summary: 'fail unpaid receipts past their expiry with PORTAL_SESSION_EXPIRED' },
  splitsReconcile: { kind: 'timer', name: 'splits-reconcile', schedule: '*/15 * * * * *', summary: 'have the relayer distribute splits holding paid receipts, then mark them reconciled' },
  metricsReport: { kind: 'timer', name: 'metrics-report', schedule: '*/60 * * * * *', summary: "queue depths and the relayer's balance, for the alerts" },
} as const satisfies Record<string, TriggerSpec>;

export const allTriggers: TriggerSpec[] = Object.values(triggers);
