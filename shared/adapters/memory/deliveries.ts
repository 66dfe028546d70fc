import type { DeliveryAttempt } from '../../domain/webhook';
import type { DeliveryLog } from '../../ports/webhooks';
import { MemoryCollection } from './documents';

export class MemoryDeliveryLog extends MemoryCollection<DeliveryAttempt> implements DeliveryLog {
  async listForReceipt(receiptId: string) {
    return this.all().filter((attempt) => attempt.receiptId === receiptId);
  }
}

/** Queued messages in process: unit tests read what was sent and when it becomes visible. */
export class MemoryEventQueue {
  readonly sent: Array<{ queue: string; message: unknown; delaySeconds: number }> = [];

  async send(queue: string, message: unknown, options: { delaySeconds?: number } = {}) {
    this.sent.push({ queue, message: structuredClone(message), delaySeconds: options.delaySeconds ?? 0 });
  }

  take(queue: string) {
    const taken = this.sent.filter((entry) => entry.queue === queue);
    this.sent.splice(0, this.sent.length, ...this.sent.filter((entry) => entry.queue !== queue));
    return taken;
  }
}
