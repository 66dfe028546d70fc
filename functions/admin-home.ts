import { app } from '@azure/functions';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';
import { adminPage } from '../web/admin/page';

app.http(routes.adminHome.name, httpFunction(routes.adminHome, ({ deps, session, wallet, query }) => adminPage(deps, { session, wallet }, '', query)));
