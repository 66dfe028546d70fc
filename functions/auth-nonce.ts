import { app } from '@azure/functions';
import { issueNonce } from '../shared/app/auth';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.authNonce.name, httpFunction(routes.authNonce, ({ deps }) => issueNonce(deps)));
