import { app } from '@azure/functions';
import { directoryFor } from '../shared/app/directory';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.directoryShops.name, httpFunction(routes.directoryShops, ({ deps, headers, query }) => directoryFor(deps, headers, query)));
