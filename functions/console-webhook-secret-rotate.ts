import { app } from '@azure/functions';
import { rotateWebhookSecret } from '../shared/app/webhook-secrets';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.consoleWebhookSecretRotate.name, httpFunction(routes.consoleWebhookSecretRotate, ({ deps, wallet }) => rotateWebhookSecret(deps, wallet)));
