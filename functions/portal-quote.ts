import { app } from '@azure/functions';
import { quoteFor } from '../shared/app/payments/portal';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.portalQuote.name,
  httpFunction(routes.portalQuote, async ({ deps, params, body }) => ({ ok: true as const, quote: await quoteFor(deps, params.id, body.token) })),
);
