import { app } from '@azure/functions';
import { createReceipt } from '../shared/app/receipts';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.receiptsCreate.name,
  httpFunction(routes.receiptsCreate, ({ deps, wallet, subscription, body }) => createReceipt(deps, { wallet, subscriptionId: subscription?.id ?? null }, body)),
);
