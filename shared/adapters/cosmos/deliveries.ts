import type { DeliveryAttempt } from '../../domain/webhook';
import type { DeliveryLog } from '../../ports/webhooks';
import { containers } from '../../registry';
import { cosmosCall, fromDocument, type CosmosStore } from './client';
import { CosmosCollection } from './documents';

export class CosmosDeliveryLog extends CosmosCollection<DeliveryAttempt> implements DeliveryLog {
  constructor(store: CosmosStore) {
    super(store, containers.deliveries);
  }

  async claim(attempt: DeliveryAttempt) {
    await this.create(attempt.receiptId, attempt);
  }

  async record(attempt: DeliveryAttempt) {
    await this.upsert(attempt.receiptId, attempt);
  }

  async find(receiptId: string, id: string) {
    return (await this.get(receiptId, id))?.value;
  }

  async listForReceipt(receiptId: string) {
    const { resources } = await cosmosCall(() =>
      this.container.items
        .query<Record<string, unknown>>(
          { query: 'SELECT * FROM c WHERE c.receiptId = @receiptId', parameters: [{ name: '@receiptId', value: receiptId }] },
          { partitionKey: receiptId },
        )
        .fetchAll(),
    );
    return resources
      .map((document) => fromDocument<DeliveryAttempt>(document).value)
      .sort((a, b) => a.startedAt - b.startedAt || a.attempt - b.attempt);
  }
}
