import { app } from '@azure/functions';
import { getPortalView } from '../shared/app/payments/portal';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.portalGet.name, httpFunction(routes.portalGet, ({ deps, params }) => getPortalView(deps, params.id)));
