import { app } from '@azure/functions';
import { deleteInventoryOrAccept } from '../shared/app/degraded-writes';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.consoleInventoryDelete.name,
  httpFunction(routes.consoleInventoryDelete, ({ deps, wallet, query }) => deleteInventoryOrAccept(deps, wallet, query.id)),
);
