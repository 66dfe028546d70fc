import { app } from '@azure/functions';
import { reconcileSplits } from '../shared/app/payments/reconcile';
import { timerFunction } from '../shared/triggers/registration';
import { triggers } from '../shared/triggers/table';

app.timer(triggers.splitsReconcile.name, timerFunction(triggers.splitsReconcile, (deps) => reconcileSplits(deps)));
