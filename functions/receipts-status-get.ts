import { app } from '@azure/functions';
import { getReceiptStatus } from '../shared/app/receipts';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.receiptsStatusGet.name, httpFunction(routes.receiptsStatusGet, ({ deps, wallet, query }) => getReceiptStatus(deps, wallet, query.id)));
