import { z } from 'zod';
import { APP_VERSION } from '../config';
import { errorCodes, type ErrorCode } from '../domain/errors';
import { WebhookBody } from '../domain/receipt-views';
import { httpStatusOf } from './errors';
import type { RouteSpec } from './routes';

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
  resetAt: z.number().int().optional().describe('Unix ms when the quota renews, for 429s'),
});

/** The errors every route of an auth kind can answer, beyond its own. */
const commonErrors: Record<RouteSpec['auth']['kind'], ErrorCode[]> = {
  key: ['unauthorized', 'forbidden', 'rate_limited'],
  session: ['unauthorized', 'forbidden'],
  public: ['rate_limited'],
  portal: ['rate_limited'],
  x402: ['rate_limited', 'service_unavailable'],
};

const securityOf = (route: RouteSpec) => {
  if (route.auth.kind === 'key') return [{ subscriptionKey: [] }];
  if (route.auth.kind === 'session') return [{ sessionCookie: [] }];
  if (route.auth.kind === 'x402') return [{ x402: [] }];
  return [];
};

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
  const errors = [...new Set([...commonErrors[route.auth.kind], ...route.errors, 'internal_error' as const])];
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
    ...(requestBody && { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(requestBody, 'input') } } } }),
    responses: {
      [success]: {
        description: 'Success',
        ...(route.auth.kind === 'key' && { headers: rateLimitHeaders }),
        content: successContent(route),
      },
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
            'Sent on every receipt status change; HMAC-SHA256 of the body with the creating API key in X-Service-Signature, and of "<t>.<body>" in X-Service-Signature-Timestamped (t=<unix ms>,v1=<hex>) for replay protection',
          parameters: ['Signature', 'Signature-Timestamped', 'Event', 'Delivery', 'Timestamp'].map((name) => ({ name: `X-Service-${name}`, in: 'header', required: true, schema: { type: 'string' } })),
          requestBody: { required: true, content: { 'application/json': { schema: schemaOf(WebhookBody, 'output') } } },
          responses: { '200': { description: 'Any 2xx within 5 seconds acknowledges the event' } },
        },
      },
    },
    components: {
      schemas: { Error: schemaOf(ErrorBody, 'output') },
      securitySchemes: {
        subscriptionKey: { type: 'apiKey', in: 'header', name: 'Ocp-Apim-Subscription-Key', description: 'API Management subscription key (x-api-key is accepted too)' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'cb_auth_token', description: 'Admin session from wallet sign-in (EIP-4361); writes also need x-csrf-token and Origin' },
        x402: { type: 'apiKey', in: 'header', name: 'X-PAYMENT', description: 'x402 payment proof (PAYMENT-SIGNATURE is accepted too); without it the route answers 402' },
        siwx: { type: 'apiKey', in: 'header', name: 'SIGN-IN-WITH-X', description: 'Sign-in-with-X credential where a route names it' },
      },
    },
  };
};
