import { app } from '@azure/functions';
import { sendConsoleTestEvent } from '../shared/app/webhooks';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.consoleWebhooksTest.name, httpFunction(routes.consoleWebhooksTest, ({ deps, wallet, body }) => sendConsoleTestEvent(deps, wallet, body)));
