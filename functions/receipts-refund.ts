import { app } from '@azure/functions';
import { requestRefund } from '../shared/app/payments/refunds';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.receiptsRefund.name, httpFunction(routes.receiptsRefund, ({ deps, wallet, body }) => requestRefund(deps, wallet, body)));
