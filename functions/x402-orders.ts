import { app } from '@azure/functions';
import { x402Order } from '../shared/app/x402/orders';
import { Reply, httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.x402Orders.name,
  httpFunction(routes.x402Orders, async ({ deps, headers, body }) => {
    const answer = await x402Order(deps, headers, body);
    return new Reply(answer.status, answer.body as never, [], answer.headers);
  }),
);
