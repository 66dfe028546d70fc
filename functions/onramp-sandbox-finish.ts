import { app } from '@azure/functions';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';
import { sandboxFormPost } from '../web/onramp-sandbox/page';

app.http(
  routes.onrampSandboxFinish.name,
  httpFunction(routes.onrampSandboxFinish, ({ deps, params, body }) => sandboxFormPost(deps, params.session, body.outcome)),
);
