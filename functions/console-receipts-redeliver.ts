import { app } from '@azure/functions';
import { redeliver } from '../shared/app/webhooks';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.consoleReceiptsRedeliver.name,
  httpFunction(routes.consoleReceiptsRedeliver, ({ deps, wallet, params }) => redeliver(deps, wallet, params.id, params.eventId)),
);
