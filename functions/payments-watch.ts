import { app } from '@azure/functions';
import { watchRefunds } from '../shared/app/payments/refunds';
import { watchPayments } from '../shared/app/payments/watcher';
import { timerFunction } from '../shared/triggers/registration';
import { triggers } from '../shared/triggers/table';

app.timer(triggers.paymentsWatch.name, timerFunction(triggers.paymentsWatch, (deps) => watchPayments(deps, [watchRefunds])));
