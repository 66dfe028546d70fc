import { app } from '@azure/functions';
import { deleteInventoryItem } from '../shared/app/inventory-delete';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.inventoryDelete.name,
  httpFunction(routes.inventoryDelete, ({ deps, wallet, query }) => deleteInventoryItem(deps, wallet, query.id)),
);
