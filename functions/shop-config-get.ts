import { app } from '@azure/functions';
import { getShopConfig } from '../shared/app/shop-config';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.shopConfigGet.name, httpFunction(routes.shopConfigGet, ({ deps, wallet }) => getShopConfig(deps, wallet)));
