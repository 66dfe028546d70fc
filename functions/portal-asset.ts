import { app } from '@azure/functions';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';
import { portalAsset } from '../web/portal/page';

app.http(routes.portalAsset.name, httpFunction(routes.portalAsset, ({ params }) => portalAsset(params.file)));
