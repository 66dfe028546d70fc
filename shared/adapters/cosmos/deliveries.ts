import type { DeliveryAttempt } from '../../domain/webhook';
import type { DeliveryLog } from '../../ports/webhooks';
import { containers } from '../../registry';
import { cosmosCall, fromDocument, type CosmosStore } from './client';
import { CosmosCollection } from './documents';

export class CosmosDeliveryLog extends CosmosCollection<DeliveryAttempt> implements DeliveryLog {
  constructor(store: CosmosStore) {
    super(store, containers.deliveries);
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
    return resources.map((document) => fromDocument<DeliveryAttempt>(document).value);
  }
}
