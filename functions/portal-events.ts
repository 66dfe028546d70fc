import { app } from '@azure/functions';
import { recordPortalEvent } from '../shared/app/payments/portal';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.portalEvents.name, httpFunction(routes.portalEvents, ({ deps, params, body }) => recordPortalEvent(deps, params.id, body)));
