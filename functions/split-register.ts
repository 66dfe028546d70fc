import { app } from '@azure/functions';
import { registerSplit } from '../shared/app/splits';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.splitRegister.name, httpFunction(routes.splitRegister, ({ deps, wallet }) => registerSplit(deps, wallet)));
