import { app } from '@azure/functions';
import { OutboxEntry, applyOutboxEntry } from '../shared/app/outbox';
import { queueFunction } from '../shared/http/triggers';
import { queues } from '../shared/registry';

app.storageQueue(
  'outbox-apply',
  queueFunction('outbox-apply', queues.outbox, OutboxEntry, async (deps, entry) => {
    await applyOutboxEntry(deps, entry);
  }),
);
