import { app } from '@azure/functions';
import { upsertInventoryItem } from '../shared/app/inventory-upsert';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.inventoryUpsert.name,
  httpFunction(routes.inventoryUpsert, ({ deps, wallet, body }) => upsertInventoryItem(deps, wallet, body)),
);
