import { app } from '@azure/functions';
import { deliverWebhook } from '../shared/app/webhooks';
import { queueFunction } from '../shared/triggers/registration';
import { triggers } from '../shared/triggers/table';

app.storageQueue(triggers.webhooksDeliver.name, queueFunction(triggers.webhooksDeliver, (deps, message) => deliverWebhook(deps, message)));
