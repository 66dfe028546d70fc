import { app } from '@azure/functions';
import { x402Subscribe } from '../shared/app/x402/subscribe';
import { Reply, httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.x402Subscribe.name,
  httpFunction(routes.x402Subscribe, async ({ deps, headers, body }) => {
    const answer = await x402Subscribe(deps, headers, body);
    return new Reply(answer.status, answer.body as never, [], answer.headers);
  }),
);
