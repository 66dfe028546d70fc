import { app } from '@azure/functions';
import { getSiteConfig } from '../shared/app/site-config';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.siteConfig.name, httpFunction(routes.siteConfig, ({ deps, query }) => getSiteConfig(deps, query.shop)));
