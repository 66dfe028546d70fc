import { app } from '@azure/functions';
import { rollMerchantKey } from '../shared/app/api-keys';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.keysRoll.name, httpFunction(routes.keysRoll, ({ deps, wallet, params, body }) => rollMerchantKey(deps, wallet, params.id, body)));
