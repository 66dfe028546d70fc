import { app } from '@azure/functions';
import { reportReceiptStatus } from '../shared/app/receipts';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.receiptsStatusPost.name, httpFunction(routes.receiptsStatusPost, ({ deps, wallet, body }) => reportReceiptStatus(deps, wallet, body)));
