import { app } from '@azure/functions';
import { createReceiptOrAccept } from '../shared/app/degraded-writes';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.receiptsCreate.name,
  httpFunction(routes.receiptsCreate, ({ deps, wallet, subscription, body }) =>
    createReceiptOrAccept(deps, { wallet, subscriptionId: subscription?.id ?? null }, body),
  ),
);
