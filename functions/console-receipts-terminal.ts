import { app } from '@azure/functions';
import { createConsoleTerminalReceipt } from '../shared/app/payments/terminal';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(
  routes.consoleReceiptsTerminal.name,
  httpFunction(routes.consoleReceiptsTerminal, ({ deps, wallet, body }) => createConsoleTerminalReceipt(deps, wallet, body)),
);
