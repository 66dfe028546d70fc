import { app } from '@azure/functions';
import { createTerminalReceipt } from '../shared/app/payments/terminal';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.receiptsTerminal.name,
  httpFunction(routes.receiptsTerminal, ({ deps, wallet, subscription, body }) =>
    createTerminalReceipt(deps, { wallet, subscriptionId: subscription.id }, body),
  ),
);
