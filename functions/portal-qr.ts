import { app } from '@azure/functions';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';
import { portalQr } from '../web/portal/page';

app.http(routes.portalQr.name, httpFunction(routes.portalQr, ({ deps, params, query }) => portalQr(deps, params.id, query.token)));
