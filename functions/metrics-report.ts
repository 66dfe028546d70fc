import { app } from '@azure/functions';
import { reportMetrics } from '../shared/app/report-metrics';
import { timerFunction } from '../shared/triggers/registration';
import { triggers } from '../shared/triggers/table';

app.timer(triggers.metricsReport.name, timerFunction(triggers.metricsReport, (deps) => reportMetrics(deps)));
