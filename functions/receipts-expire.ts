import { app } from '@azure/functions';
import { expireReceipts } from '../shared/app/payments/expiry';
import { timerFunction } from '../shared/triggers/registration';
import { triggers } from '../shared/triggers/table';

app.timer(triggers.receiptsExpire.name, timerFunction(triggers.receiptsExpire, (deps) => expireReceipts(deps)));
