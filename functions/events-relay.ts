import { app } from '@azure/functions';
import { relayPendingEvents } from '../shared/app/receipt-status';
import { timerFunction } from '../shared/http/triggers';

// Every 5 seconds: queue the status events that a queue outage left in receipts.
app.timer('events-relay', timerFunction('events-relay', '*/5 * * * * *', (deps) => relayPendingEvents(deps)));
