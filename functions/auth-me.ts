import { app } from '@azure/functions';
import { describeSession } from '../shared/app/auth';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.authMe.name, httpFunction(routes.authMe, async ({ deps, session }) => describeSession(deps, session)));
