import { app } from '@azure/functions';
import { listDeliveries } from '../shared/app/webhooks';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.consoleReceiptsDeliveries.name,
  httpFunction(routes.consoleReceiptsDeliveries, ({ deps, wallet, params }) => listDeliveries(deps, wallet, params.id)),
);
