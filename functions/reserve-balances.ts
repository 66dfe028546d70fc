import { app } from '@azure/functions';
import { getReserveBalances } from '../shared/app/reserve';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.reserveBalances.name, httpFunction(routes.reserveBalances, ({ deps, wallet }) => getReserveBalances(deps, wallet)));
