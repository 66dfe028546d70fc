import { app } from '@azure/functions';
import { listSplitTransactions } from '../shared/app/inflows';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.splitTransactions.name,
  httpFunction(routes.splitTransactions, ({ deps, wallet, query }) => listSplitTransactions(deps, wallet, query)),
);
