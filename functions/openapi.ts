import { app } from '@azure/functions';
import { httpFunction } from '../shared/http/function';
import { openApiDocument } from '../shared/http/openapi';
import { allRoutes, routes } from '../shared/http/routes';

let document: ReturnType<typeof openApiDocument> | undefined;

app.http(
  routes.openapi.name,
  httpFunction(routes.openapi, async ({ deps }) => (document ??= openApiDocument(allRoutes, { title: `${deps.settings.brandName} API`, serverUrl: deps.settings.baseUrl }))),
);
