import { app } from '@azure/functions';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';
import { sandboxPage } from '../web/onramp-sandbox/page';

app.http(routes.onrampSandboxPage.name, httpFunction(routes.onrampSandboxPage, ({ deps, params }) => sandboxPage(deps, params.session)));
