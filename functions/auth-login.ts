import { app } from '@azure/functions';
import { signIn } from '../shared/app/auth';
import { SESSION_TTL_MS } from '../shared/domain/session';
import { sessionCookies } from '../shared/http/cookies';
import { Reply, httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.authLogin.name,
  httpFunction(routes.authLogin, async ({ deps, body }) => {
    const { token, csrfToken, ...session } = await signIn(deps, body);
    const cookies = sessionCookies(deps.settings.baseUrl, { token, csrfToken }, SESSION_TTL_MS / 1000);
    return new Reply(200, { ok: true as const, ...session, csrfToken }, cookies);
  }),
);
