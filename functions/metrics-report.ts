import { app } from '@azure/functions';
import { reportMetrics } from '../shared/app/report-metrics';
import { timerFunction } from '../shared/http/triggers';

// Every minute: queue depths and the relayer's balance, for the alerts in infra/modules/alerts.bicep.
app.timer('metrics-report', timerFunction('metrics-report', '*/60 * * * * *', (deps) => reportMetrics(deps)));
