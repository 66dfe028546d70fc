import { app } from '@azure/functions';
import { getReceipt } from '../shared/app/receipts';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.consoleReceiptsGet.name, httpFunction(routes.consoleReceiptsGet, ({ deps, wallet, params }) => getReceipt(deps, wallet, params.id)));
