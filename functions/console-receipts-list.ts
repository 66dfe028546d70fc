import { app } from '@azure/functions';
import { listReceipts } from '../shared/app/receipts';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.consoleReceiptsList.name, httpFunction(routes.consoleReceiptsList, ({ deps, wallet, query }) => listReceipts(deps, wallet, query)));
