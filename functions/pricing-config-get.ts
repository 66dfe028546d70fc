import { app } from '@azure/functions';
import { getPricingConfig } from '../shared/app/pricing';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.pricingConfigGet.name,
  httpFunction(routes.pricingConfigGet, ({ deps, subscription }) => getPricingConfig(deps, subscription.brand)),
);
