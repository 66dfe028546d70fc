import { app } from '@azure/functions';
import { verifyPayment } from '../shared/app/payments/verify';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.portalPayments.name, httpFunction(routes.portalPayments, ({ deps, params, body }) => verifyPayment(deps, params.id, body.txHash, { reporter: 'page' })));
