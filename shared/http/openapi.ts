import { z } from 'zod';
import { APP_VERSION } from '../config';
import { errorCodes, type ErrorCode } from '../domain/errors';
import { WebhookBody } from '../domain/receipt-views';
import { X402_HEADERS } from '../domain/x402';
import { httpStatusOf } from './errors';
import type { RouteSpec } from './routes';
import { PaymentRequiredV1Body } from './x402-challenge';

/**
 * The OpenAPI 3.1 document, generated from the route table and its zod schemas: the one source of
 * truth for paths, parameters, bodies, responses, error codes and security.
 */
type JsonSchema = Record<string, unknown>;

const schemaOf = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  return json;
};

const ErrorBody = z.object({
  error: z.enum(errorCodes),
  message: z.string(),
  field: z.string().optional().describe('the input field at fault, for 400s'),
  resetAt: z.number().int().optional().describe('Unix ms when the quota renews, for 429s (and when the relayer budget does, for relayer_budget_spent)'),
});

/** The errors every route of an auth kind can answer, beyond its own. */
const commonErrors: Record<RouteSpec['auth']['kind'], ErrorCode[]> = {
  key: ['unauthorized', 'forbidden', 'rate_limited'],
  session: ['unauthorized', 'forbidden'],
  public: ['rate_limited'],
  portal: ['rate_limited'],
  x402: ['rate_limited', 'service_unavailable', 'relayer_budget_spent'],
};

/**
 * Routes that read a `SIGN-IN-WITH-X` proof: the directory (optional; it marks the caller's own shop)
 * and the subscription route (the free starter plan is a sign-in, not a payment). On these the proof
 * is an alternative to the route's own security. A key route is not listed: the gateway answers 401
 * to it without a key, whatever else the call carries.
 */
export const signInWithXRoutes: readonly string[] = ['directory-shops', 'x402-subscribe', 'shop-config-get'];

const securityOf = (route: RouteSpec) => {
  // An optional session (the console's pages): the empty requirement says the page answers without one too.
  const session = route.auth.kind === 'session' ? [{ sessionCookie: [] }, ...(route.auth.optional ? [{}] : [])] : [];
  const own = route.auth.kind === 'key' ? [{ subscriptionKey: [] }] : route.auth.kind === 'session' ? session : route.auth.kind === 'x402' ? [{ x402: [] }] : [];
  if (!signInWithXRoutes.includes(route.name)) return own;
  // An empty requirement: the route is also open without any credential.
  return [...(own.length > 0 ? own : [{}]), { siwx: [] }];
};

/** The request headers of x402 and sign-in-with-x, on the routes that read them. */
const x402RequestHeaders = (route: RouteSpec): JsonSchema[] => [
  ...(route.auth.kind === 'x402'
    ? [
        { name: X402_HEADERS.paymentV1, in: 'header', required: false, description: 'x402 v1 payment proof, base64 JSON; without a proof the route answers 402 with the challenge', schema: { type: 'string' } },
        { name: X402_HEADERS.paymentV2, in: 'header', required: false, description: 'x402 v2 payment proof, base64 JSON (instead of X-PAYMENT)', schema: { type: 'string' } },
      ]
    : []),
  ...(signInWithXRoutes.includes(route.name)
    ? [{ name: X402_HEADERS.signInWithX, in: 'header', required: false, description: 'sign-in-with-x proof of a wallet (CAIP-122 / EIP-4361), base64 JSON', schema: { type: 'string' } }]
    : []),
];

/** A paid answer's settlement, in the header of the proof's version. */
const paymentResponseHeaders = () => ({
  [X402_HEADERS.responseV1]: { description: 'the settlement (transaction, network, payer), base64 JSON, when a v1 proof (X-PAYMENT) paid', schema: { type: 'string' } },
  [X402_HEADERS.responseV2]: { description: 'the settlement (transaction, network, payer), base64 JSON, when a v2 proof (PAYMENT-SIGNATURE) paid', schema: { type: 'string' } },
});

/** The 402 of an x402 route: the v1 challenge as the body, the v2 challenge in a header. */
const paymentRequiredResponse = () => ({
  description: 'Payment required: no payment proof, or one that was refused (the body says why); pay one of accepts and send the proof again',
  headers: {
    [X402_HEADERS.paymentRequired]: { description: 'the same challenge in the x402 v2 form (PaymentRequired, x402Version 2), base64 JSON', required: true, schema: { type: 'string' } },
  },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/PaymentRequired' } } },
});

const rateLimitHeaders = {
  'X-RateLimit-Limit': { description: 'Requests a minute on this plan', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When the window renews (Unix ms)', schema: { type: 'integer' } },
};

/**
 * What a success answers: JSON by the route's response schema; a page (`html`) is markup; a file
 * (`asset`) has one of the route's media types.
 */
const successContent = (route: RouteSpec): Record<string, { schema: JsonSchema }> => {
  if (route.responseKind === 'html') return { 'text/html': { schema: { type: 'string', description: 'the page' } } };
  if (route.responseKind === 'asset') {
    return Object.fromEntries((route.assetTypes ?? ['application/octet-stream']).map((type) => [type, { schema: { type: 'string', description: 'the file' } }]));
  }
  return { 'application/json': { schema: schemaOf(route.response, 'output') } };
};

/** An error answer: the error shape; a page's errors are pages when the service answers, the error shape when the gateway does. */
const errorContent = (route: RouteSpec, codes: ErrorCode[]) => {
  const json = {
    'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples: Object.fromEntries(codes.map((code) => [code, { value: { error: code, message: '…' } }])) },
  };
  if (route.responseKind !== 'html') return json;
  return { 'text/html': { schema: { type: 'string', description: 'an error page naming the code' } }, ...json };
};

const operationOf = (route: RouteSpec) => {
  const parameters: JsonSchema[] = [];
  for (const name of [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!)) {
    parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  if (route.query) {
    const query = schemaOf(route.query, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      parameters.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema });
    }
  }
  parameters.push(...x402RequestHeaders(route));
  // An x402 route's 402 is the challenge, not the error shape.
  const errors = [...new Set([...commonErrors[route.auth.kind], ...route.errors, 'internal_error' as const])].filter((code) => !(route.auth.kind === 'x402' && httpStatusOf[code] === 402));
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errors) byStatus.set(httpStatusOf[code], [...(byStatus.get(httpStatusOf[code]) ?? []), code]);
  const success = String(route.successStatus ?? 200);
  const requestBody = route.documentedBody ?? route.body;
  return {
    operationId: route.name,
    summary: route.summary,
    tags: [route.path.split('/').filter(Boolean).slice(route.path.startsWith('/api/') ? 1 : 0)[0] ?? 'service'],
    security: securityOf(route),
    'x-auth': route.auth,
    ...(parameters.length > 0 && { parameters }),
    ...(requestBody && {
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: schemaOf(requestBody, 'input') },
          ...(route.formBody && { 'application/x-www-form-urlencoded': { schema: schemaOf(requestBody, 'input') } }),
        },
      },
    }),
    responses: {
      [success]: {
        description: 'Success',
        ...(route.auth.kind === 'key' && { headers: rateLimitHeaders }),
        ...(route.auth.kind === 'x402' && { headers: paymentResponseHeaders() }),
        content: successContent(route),
      },
      ...(route.auth.kind === 'x402' && { '402': paymentRequiredResponse() }),
      ...Object.fromEntries([...byStatus].map(([status, codes]) => [String(status), { description: `Error: ${codes.join(', ')}`, content: errorContent(route, codes) }])),
    },
  };
};

export const openApiDocument = (routes: RouteSpec[], options: { title: string; serverUrl: string; description?: string }) => {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operationOf(route);
  return {
    openapi: '3.1.0',
    // The service's version, as /healthz answers it.
    info: { title: options.title, version: APP_VERSION, ...(options.description && { description: options.description }) },
    servers: [{ url: options.serverUrl }],
    paths,
    webhooks: {
      'receipt.status_updated': {
        post: {
          summary:
            'Sent on every receipt status change; HMAC-SHA256 of the body with the creating API key (or, for a receipt no key created, the shop\'s webhook signing secret) in X-Service-Signature, and of "<t>.<body>" in X-Service-Signature-Timestamped (t=<unix ms>,v1=<hex>) for replay protection; during a signing secret\'s rotation the latter carries a v1 by each of the two secrets',
          parameters: ['Signature', 'Signature-Timestamped', 'Event', 'Delivery', 'Timestamp'].map((name) => ({ name: `X-Service-${name}`, in: 'header', required: true, schema: { type: 'string' } })),
          requestBody: { required: true, content: { 'application/json': { schema: schemaOf(WebhookBody, 'output') } } },
          responses: { '200': { description: 'Any 2xx within 5 seconds acknowledges the event' } },
        },
      },
    },
    components: {
      schemas: {
        Error: schemaOf(ErrorBody, 'output'),
        ...(routes.some((route) => route.auth.kind === 'x402') && { PaymentRequired: schemaOf(PaymentRequiredV1Body, 'output') }),
      },
      securitySchemes: {
        subscriptionKey: { type: 'apiKey', in: 'header', name: 'Ocp-Apim-Subscription-Key', description: 'API Management subscription key (x-api-key is accepted too)' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'cb_auth_token', description: 'Admin session from wallet sign-in (EIP-4361); writes also need x-csrf-token and Origin' },
        x402: {
          type: 'apiKey',
          in: 'header',
          name: X402_HEADERS.paymentV1,
          description:
            'x402 payment proof, base64 JSON: v1 in X-PAYMENT, or v2 in PAYMENT-SIGNATURE. Without one the route answers 402 with the challenge (v1 in the body, v2 in PAYMENT-REQUIRED); a paid answer carries the settlement in X-PAYMENT-RESPONSE (v1) or PAYMENT-RESPONSE (v2)',
        },
        siwx: { type: 'apiKey', in: 'header', name: X402_HEADERS.signInWithX, description: 'sign-in-with-x proof of a wallet (CAIP-122 / EIP-4361), base64 JSON, where a route reads one' },
      },
    },
  };
};
