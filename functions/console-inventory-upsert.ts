import { app } from '@azure/functions';
import { upsertInventoryOrAccept } from '../shared/app/degraded-writes';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.consoleInventoryUpsert.name,
  httpFunction(routes.consoleInventoryUpsert, ({ deps, wallet, body }) => upsertInventoryOrAccept(deps, wallet, body)),
);
