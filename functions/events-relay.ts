import { app } from '@azure/functions';
import { relayPendingEvents } from '../shared/app/receipt-status';
import { timerFunction } from '../shared/triggers/registration';
import { triggers } from '../shared/triggers/table';

app.timer(triggers.eventsRelay.name, timerFunction(triggers.eventsRelay, (deps) => relayPendingEvents(deps)));
