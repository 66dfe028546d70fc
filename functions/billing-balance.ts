import { app } from '@azure/functions';
import { getBillingBalance } from '../shared/app/billing';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.billingBalance.name, httpFunction(routes.billingBalance, ({ deps, subscription }) => getBillingBalance(deps, subscription)));
