import { app } from '@azure/functions';
import { updateShopConfig } from '../shared/app/shop-config';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.shopConfigUpdate.name,
  httpFunction(routes.shopConfigUpdate, ({ deps, wallet, body }) => updateShopConfig(deps, wallet, body)),
);
