import { app } from '@azure/functions';
import { signOut } from '../shared/app/auth';
import { sessionCookies } from '../shared/http/cookies';
import { Reply, httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.authLogout.name,
  httpFunction(routes.authLogout, async ({ deps, session }) =>
    new Reply(200, await signOut(deps, session), sessionCookies(deps.settings.baseUrl, undefined, 0)),
  ),
);
