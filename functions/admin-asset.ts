import { app } from '@azure/functions';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';
import { adminAsset } from '../web/admin/page';

app.http(routes.adminAsset.name, httpFunction(routes.adminAsset, ({ params }) => adminAsset(params.file)));
