import { app } from '@azure/functions';
import { checkHealth } from '../shared/app/health';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.healthz.name, httpFunction(routes.healthz, ({ deps }) => checkHealth(deps)));
