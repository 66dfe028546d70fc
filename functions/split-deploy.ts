import { app } from '@azure/functions';
import { deploySplit } from '../shared/app/splits';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.splitDeploy.name, httpFunction(routes.splitDeploy, ({ deps, wallet }) => deploySplit(deps, wallet)));
