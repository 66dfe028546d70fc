import { app } from '@azure/functions';
import { revokeMerchantKey } from '../shared/app/api-keys';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.keysRevoke.name, httpFunction(routes.keysRevoke, ({ deps, wallet, params }) => revokeMerchantKey(deps, wallet, params.id)));
