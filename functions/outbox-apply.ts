import { app } from '@azure/functions';
import { applyOutboxEntry } from '../shared/app/outbox';
import { queueFunction } from '../shared/triggers/registration';
import { triggers } from '../shared/triggers/table';

app.storageQueue(
  triggers.outboxApply.name,
  queueFunction(triggers.outboxApply, async (deps, entry) => {
    await applyOutboxEntry(deps, entry);
  }),
);
