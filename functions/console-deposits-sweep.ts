import { app } from '@azure/functions';
import { depositSweepCall } from '../shared/app/payments/sweeps';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.consoleDepositsSweep.name, httpFunction(routes.consoleDepositsSweep, ({ deps, wallet, body }) => depositSweepCall(deps, wallet, body)));
