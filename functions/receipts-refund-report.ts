import { app } from '@azure/functions';
import { verifyRefund } from '../shared/app/payments/refunds';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.receiptsRefundReport.name,
  httpFunction(routes.receiptsRefundReport, ({ deps, wallet, body }) => verifyRefund(deps, wallet, body.id, body.txHash)),
);
