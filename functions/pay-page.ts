import { app } from '@azure/functions';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';
import { portalPage } from '../web/portal/page';

app.http(routes.payPage.name, httpFunction(routes.payPage, ({ deps, params }) => portalPage(deps, params.id)));
