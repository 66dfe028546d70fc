import { app } from '@azure/functions';
import { createOrder } from '../shared/app/orders';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.ordersCreate.name,
  httpFunction(routes.ordersCreate, ({ deps, wallet, subscription, body }) =>
    createOrder(deps, { wallet, subscriptionId: subscription?.id ?? null }, body),
  ),
);
