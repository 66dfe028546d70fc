import { app } from '@azure/functions';
import { getReceiptProof } from '../shared/app/receipt-proofs';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.receiptsProof.name, httpFunction(routes.receiptsProof, ({ deps, wallet, params }) => getReceiptProof(deps, wallet, params.id)));
