import { app } from '@azure/functions';
import { reportStatusOrAccept } from '../shared/app/degraded-writes';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.receiptsStatusPost.name, httpFunction(routes.receiptsStatusPost, ({ deps, wallet, body }) => reportStatusOrAccept(deps, wallet, body)));
