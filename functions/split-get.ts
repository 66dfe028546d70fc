import { app } from '@azure/functions';
import { getSplit } from '../shared/app/splits';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.splitGet.name, httpFunction(routes.splitGet, ({ deps, wallet }) => getSplit(deps, wallet)));
