import { app } from '@azure/functions';
import { openOnrampSession } from '../shared/app/onramp';
import { httpFunction } from '../shared/http/function';
import { clientAddressOf } from '../shared/http/incoming';
import { routes } from '../shared/http/routes';

app.http(
  routes.portalOnramp.name,
  httpFunction(routes.portalOnramp, ({ deps, params, headers }) => openOnrampSession(deps, params.id, clientAddressOf(headers))),
);
