import { app } from '@azure/functions';
import { updatePricingConfig } from '../shared/app/pricing';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.pricingConfigUpdate.name, httpFunction(routes.pricingConfigUpdate, ({ deps, body }) => updatePricingConfig(deps, body)));
