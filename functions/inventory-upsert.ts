import { app } from '@azure/functions';
import { upsertInventoryOrAccept } from '../shared/app/degraded-writes';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.inventoryUpsert.name,
  httpFunction(routes.inventoryUpsert, ({ deps, wallet, body }) => upsertInventoryOrAccept(deps, wallet, body)),
);
