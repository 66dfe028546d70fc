import { app } from '@azure/functions';
import { getTaxCatalog } from '../shared/app/site-config';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.taxCatalog.name, httpFunction(routes.taxCatalog, async () => getTaxCatalog()));
