import { app } from '@azure/functions';
import { receiptSignerInfo } from '../shared/app/receipt-proofs';
import { httpFunction } from '../shared/http/function';
import { routes } from '../shared/http/routes';

app.http(routes.receiptSigner.name, httpFunction(routes.receiptSigner, ({ deps }) => receiptSignerInfo(deps)));
