import { app } from '@azure/functions';
import { getPortalReceiptProof } from '../shared/app/receipt-proofs';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.portalProof.name, httpFunction(routes.portalProof, ({ deps, params }) => getPortalReceiptProof(deps, params.id)));
