import { app } from '@azure/functions';
import { listDirectory } from '../shared/app/directory';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

// SIWX hook: with a verified SIGN-IN-WITH-X credential, pass its wallet as `listDirectory`'s third
// argument (`ownWallet`) to mark the caller's own shop `own: true`.
app.http(routes.directoryShops.name, httpFunction(routes.directoryShops, ({ deps, query }) => listDirectory(deps, query)));
