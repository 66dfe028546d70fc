import { app } from '@azure/functions';
import { applyOnrampWebhook } from '../shared/app/onramp';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.onrampWebhook.name,
  httpFunction(routes.onrampWebhook, ({ deps, params, rawBody, headers }) => applyOnrampWebhook(deps, params.provider, rawBody, headers)),
);
