import { app } from '@azure/functions';
import { createMerchantKey } from '../shared/app/api-keys';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.keysCreate.name, httpFunction(routes.keysCreate, ({ deps, wallet, body }) => createMerchantKey(deps, wallet, body)));
