import { app } from '@azure/functions';
import { WebhookMessageSchema } from '../shared/app/receipt-status';
import { deliverWebhook } from '../shared/app/webhooks';
import { queueFunction } from '../shared/http/triggers';
import { queues } from '../shared/registry';

app.storageQueue(
  'webhooks-deliver',
  queueFunction('webhooks-deliver', queues.webhooks, WebhookMessageSchema, (deps, message) => deliverWebhook(deps, message)),
);
