import { app } from '@azure/functions';
import { getReserveRecommendation } from '../shared/app/reserve';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.reserveRecommend.name, httpFunction(routes.reserveRecommend, ({ deps, wallet }) => getReserveRecommendation(deps, wallet)));
