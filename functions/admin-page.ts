import { app } from '@azure/functions';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';
import { adminPage } from '../web/admin/page';

app.http(routes.adminPage.name, httpFunction(routes.adminPage, ({ deps, session, wallet, params, query }) => adminPage(deps, { session, wallet }, params.page, query)));
