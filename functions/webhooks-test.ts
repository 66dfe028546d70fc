import { app } from '@azure/functions';
import { sendTestEvent } from '../shared/app/webhooks';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.webhooksTest.name,
  httpFunction(routes.webhooksTest, ({ deps, wallet, subscription, body }) => sendTestEvent(deps, { wallet, subscriptionId: subscription.id }, body.url)),
);
