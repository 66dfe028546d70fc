import { app } from '@azure/functions';
import { listInventory } from '../shared/app/inventory-list';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.inventoryList.name,
  httpFunction(routes.inventoryList, ({ deps, wallet, query }) => listInventory(deps, wallet, query)),
);
