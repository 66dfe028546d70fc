import { app } from '@azure/functions';
import { listMerchantKeys } from '../shared/app/api-keys';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.keysList.name, httpFunction(routes.keysList, ({ deps, wallet }) => listMerchantKeys(deps, wallet)));
