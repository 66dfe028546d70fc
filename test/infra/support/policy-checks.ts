/**
 * Checks of the API Management policy files. Each takes the files as contents (paths relative to
 * infra/policies/) and returns its problems, so a test runs it on the real files and on a broken copy.
 */
import { childElements, descendants, parseXml, textOf, type XmlElement } from './xml';

export type PolicyFiles = Record<string, string>;

export interface PolicyContext {
  /** The backend's error codes and their statuses (shared/http/errors.ts): gateway answers use the same. */
  httpStatusOf: Record<string, number>;
  /** The correlation-id rule of shared/http/headers.ts, as regex source. */
  correlationPattern: string;
  /** infra/modules/apim.bicep, which declares the named values and fragments the policies use. */
  apimBicep: string;
  /** The backend's request body limit in bytes (MAX_BODY_BYTES of shared/http/headers.ts). */
  maxBodyBytes: number;
}

const SECTIONS = ['inbound', 'backend', 'outbound', 'on-error'];

const parsed = (files: PolicyFiles): Map<string, XmlElement> => {
  const result = new Map<string, XmlElement>();
  for (const [file, text] of Object.entries(files)) {
    try {
      result.set(file, parseXml(text));
    } catch {
      // checkWellFormed reports it; the other checks then see the file as missing
    }
  }
  return result;
};

const section = (doc: XmlElement | undefined, name: string) => (doc ? childElements(doc, name)[0] : undefined);
const lower = (text: string | undefined) => (text ?? '').toLowerCase();

const setHeaders = (scope: XmlElement | undefined, header: string) =>
  scope ? descendants(scope, 'set-header').filter((element) => lower(element.attributes.name) === header.toLowerCase()) : [];

const deletesHeader = (scope: XmlElement | undefined, header: string) => setHeaders(scope, header).some((element) => element.attributes['exists-action'] === 'delete');

const deletesQuery = (scope: XmlElement | undefined, parameter: string) =>
  !!scope && descendants(scope, 'set-query-parameter').some((element) => element.attributes.name === parameter && element.attributes['exists-action'] === 'delete');

/** Index of an element in document order, for "this comes before that" checks. */
const order = (root: XmlElement) => {
  const all = descendants(root);
  return (element: XmlElement | undefined) => (element ? all.indexOf(element) : -1);
};

/** Every file parses as XML; policies have the four sections in order; <base /> is where scope order needs it. */
export const checkWellFormed = (files: PolicyFiles): string[] => {
  const problems: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    let doc: XmlElement;
    try {
      doc = parseXml(text);
    } catch (error) {
      problems.push(`${file}: not well-formed XML: ${(error as Error).message}`);
      continue;
    }
    if (file.startsWith('fragments/')) {
      if (doc.name !== 'fragment') problems.push(`${file}: a fragment's root must be <fragment>`);
      continue;
    }
    if (doc.name !== 'policies') {
      problems.push(`${file}: the root must be <policies>`);
      continue;
    }
    const names = childElements(doc).map((element) => element.name);
    if (names.join() !== SECTIONS.join()) {
      problems.push(`${file}: sections are ${names.join(', ') || 'none'}; expected ${SECTIONS.join(', ')}`);
      continue;
    }
    const bases = descendants(doc, 'base');
    if (file === 'global.xml') {
      if (bases.length) problems.push('global.xml: <base /> has no meaning at the global scope');
      continue;
    }
    for (const name of ['backend', 'outbound', 'on-error']) {
      if (!childElements(section(doc, name)!, 'base').length) problems.push(`${file}: <${name}> does not include <base />`);
    }
    const first = childElements(section(doc, 'inbound')!)[0];
    if (file === 'not-found.xml') {
      if (childElements(section(doc, 'inbound')!, 'base').length) problems.push('not-found.xml: <base /> in inbound would run key, edge and quota checks before the 404');
    } else if (first?.name !== 'base') {
      problems.push(`${file}: inbound must begin with <base /> so the global policy runs first`);
    }
  }
  return problems;
};

/** Client-chosen identity headers are removed; keys and the edge secret never reach the backend. */
export const checkHeaderHygiene = (files: PolicyFiles): string[] => {
  const problems: string[] = [];
  const docs = parsed(files);
  const globalInbound = section(docs.get('global.xml'), 'inbound');
  for (const header of ['x-wallet', 'wallet', 'x-subscription-id']) {
    if (!deletesHeader(globalInbound, header)) problems.push(`global.xml: inbound does not remove the client's ${header} header`);
  }
  if (!deletesQuery(globalInbound, 'wallet')) problems.push('global.xml: inbound does not remove the wallet query parameter');
  const api = docs.get('api.xml');
  const apiInbound = section(api, 'inbound');
  for (const header of ['Ocp-Apim-Subscription-Key', 'x-api-key', 'x-edge-secret']) {
    if (!deletesHeader(apiInbound, header)) problems.push(`api.xml: inbound does not remove ${header} before the backend`);
  }
  if (!deletesQuery(apiInbound, 'subscription-key')) problems.push('api.xml: inbound does not remove the subscription-key query parameter');
  return problems;
};

/** x-subscription-id is the gateway's: stamped from context.Subscription.Id over any client value, after the checks. */
export const checkSubscriptionStamp = (files: PolicyFiles): string[] => {
  const problems: string[] = [];
  const api = parsed(files).get('api.xml');
  if (!api) return ['api.xml: missing or not parsed'];
  const stamp = setHeaders(section(api, 'inbound'), 'x-subscription-id').find(
    (element) => element.attributes['exists-action'] === 'override' && /context\.Subscription\.Id\b/.test(textOf(element)),
  );
  if (!stamp) return ['api.xml: x-subscription-id is not set (override) from context.Subscription.Id'];
  const at = order(api);
  const limit = descendants(api, 'rate-limit-by-key')[0];
  if (limit && at(stamp) < at(limit)) problems.push('api.xml: x-subscription-id is stamped before the quota check');
  return problems;
};

/** The client's address as the policies name it: the variable decided once from the caller. */
const CLIENT_ADDRESS = /\(string\)context\.Variables\["clientAddress"\]/;

/**
 * The client's address is decided once, in the variable clientAddress (from context.Request.IpAddress,
 * or the edge proxy's entry), before the limits count by it, and told to the backend in
 * x-client-address over any client value: the backend believes no X-Forwarded-For entry.
 */
export const checkClientAddress = (files: PolicyFiles): string[] => {
  const api = parsed(files).get('api.xml');
  const inbound = section(api, 'inbound');
  if (!api || !inbound) return ['api.xml: missing or not parsed'];
  const decided = descendants(inbound, 'set-variable').find((element) => element.attributes.name === 'clientAddress');
  if (!decided || !/context\.Request\.IpAddress/.test(decided.attributes.value ?? '')) return ['api.xml: the client address (clientAddress) is not decided from context.Request.IpAddress'];
  const problems: string[] = [];
  const stamp = setHeaders(inbound, 'x-client-address').find((element) => element.attributes['exists-action'] === 'override' && CLIENT_ADDRESS.test(textOf(element)));
  if (!stamp) problems.push('api.xml: x-client-address is not set (override) from clientAddress');
  const at = order(api);
  const limit = descendants(inbound, 'rate-limit-by-key').find((element) => CLIENT_ADDRESS.test(element.attributes['counter-key'] ?? ''));
  if (limit && at(limit) < at(decided)) problems.push('api.xml: a rate limit counts by clientAddress before it is decided');
  return problems;
};

/** With an edge proxy, x-edge-secret must equal the named value; without one, nobody may send it. */
export const checkEdgeSecret = (files: PolicyFiles): string[] => {
  const problems: string[] = [];
  const api = parsed(files).get('api.xml');
  if (!api) return ['api.xml: missing or not parsed'];
  const whens = descendants(section(api, 'inbound')!, 'when');
  const refuses = (when: XmlElement) =>
    childElements(when, 'return-response').some((response) => statusOf(response) === 403 && /"error"\s*:\s*"forbidden"/.test(bodyOf(response)));
  const required = whens.find(
    (when) => /\{\{edge-proxy-enabled\}\}"\s*==\s*"true"/.test(when.attributes.condition ?? '') && /x-edge-secret/.test(when.attributes.condition ?? '') && /\{\{edge-secret\}\}/.test(when.attributes.condition ?? ''),
  );
  if (!required || !refuses(required)) problems.push('api.xml: with an edge proxy, a request without the right x-edge-secret is not refused with 403 forbidden');
  const forbidden = whens.find(
    (when) => /\{\{edge-proxy-enabled\}\}"\s*!=\s*"true"/.test(when.attributes.condition ?? '') && /ContainsKey\("x-edge-secret"\)/.test(when.attributes.condition ?? ''),
  );
  if (!forbidden || !refuses(forbidden)) problems.push('api.xml: without an edge proxy, a client-sent x-edge-secret is not refused with 403 forbidden');
  return problems;
};

/** rate-limit-by-key per subscription at the plan's quota, the X-RateLimit-* headers, and the 429 body. */
export const checkRateLimit = (files: PolicyFiles): string[] => {
  const problems: string[] = [];
  const docs = parsed(files);
  const api = docs.get('api.xml');
  const limits = api ? descendants(section(api, 'inbound')!, 'rate-limit-by-key') : [];
  const limit = limits.find((candidate) => /context\.Subscription\.Id/.test(candidate.attributes['counter-key'] ?? ''));
  if (!limits.length) problems.push('api.xml: no rate-limit-by-key in inbound');
  else if (!limit) problems.push('api.xml: rate-limit-by-key is not keyed by context.Subscription.Id');
  else {
    if (limit.attributes['renewal-period'] !== '60') problems.push('api.xml: rate-limit-by-key renewal-period is not 60 seconds');
    if (!/callsPerMinute/.test(limit.attributes.calls ?? '')) problems.push("api.xml: rate-limit-by-key calls do not come from the product's callsPerMinute");
    if (!limit.attributes['remaining-calls-variable-name'] || !limit.attributes['retry-after-variable-name']) {
      problems.push('api.xml: rate-limit-by-key does not keep the remaining calls and the retry-after for the headers');
    }
  }
  const plan = docs.get('product-plan.xml');
  const quota = plan && descendants(section(plan, 'inbound')!, 'set-variable').find((element) => element.attributes.name === 'callsPerMinute');
  if (!quota || quota.attributes.value !== '@(__CALLS_PER_MINUTE__)') problems.push('product-plan.xml: does not set callsPerMinute to the plan quota placeholder');
  const outbound = section(api, 'outbound');
  for (const header of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
    if (!setHeaders(outbound, header).length) problems.push(`api.xml: outbound does not set ${header}`);
  }
  const reset = setHeaders(outbound, 'X-RateLimit-Reset')[0];
  if (reset && !/AddSeconds\(60\)\.ToUnixTimeMilliseconds\(\)/.test(textOf(reset))) problems.push('api.xml: X-RateLimit-Reset is not now plus the renewal period, in Unix ms');
  const onError = section(docs.get('global.xml'), 'on-error');
  const exceeded = onError && descendants(onError, 'when').find((when) => /RateLimitExceeded/.test(when.attributes.condition ?? ''));
  const response = exceeded && childElements(exceeded, 'return-response')[0];
  if (!response || statusOf(response) !== 429) problems.push('global.xml: RateLimitExceeded does not answer 429');
  else {
    const body = bodyOf(response);
    const fields: Array<[string, string]> = [
      ['JProperty("error", "rate_limited")', 'error rate_limited'],
      ['JProperty("message",', 'a message'],
      ['JProperty("resetAt",', 'resetAt'],
    ];
    for (const [needle, what] of fields) if (!body.includes(needle)) problems.push(`global.xml: the 429 body lacks ${what}`);
    for (const header of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After']) {
      if (!setHeaders(response, header).length) problems.push(`global.xml: the 429 answer lacks ${header}`);
    }
  }
  return problems;
};

/**
 * Calls without a key (the open product "public": public, session and x402 routes) are limited per
 * client address: rate-limit-by-key keyed by context.Request.IpAddress at the named value
 * keyless-calls-per-minute, after the key-route and edge checks, with the variables the X-RateLimit
 * headers and the 429 body read.
 */
export const checkKeylessRateLimit = (files: PolicyFiles): string[] => {
  const api = parsed(files).get('api.xml');
  const inbound = section(api, 'inbound');
  if (!api || !inbound) return ['api.xml: missing or not parsed'];
  const keyless = descendants(inbound, 'when').find((when) => /^@\(\s*context\.Subscription\s*==\s*null\s*\)$/.test(when.attributes.condition ?? ''));
  const limit = keyless && descendants(keyless, 'rate-limit-by-key')[0];
  if (!keyless || !limit) return ['api.xml: calls without a key (context.Subscription == null) get no rate-limit-by-key'];
  const problems: string[] = [];
  if (!CLIENT_ADDRESS.test(limit.attributes['counter-key'] ?? '')) problems.push('api.xml: the keyless rate limit is not keyed by the client address (clientAddress)');
  if (limit.attributes['renewal-period'] !== '60') problems.push('api.xml: the keyless rate limit renewal-period is not 60 seconds');
  const quota = descendants(keyless, 'set-variable').find((element) => element.attributes.name === 'callsPerMinute');
  if (!quota || quota.attributes.value !== '@({{keyless-calls-per-minute}})' || !/callsPerMinute/.test(limit.attributes.calls ?? '')) {
    problems.push('api.xml: the keyless rate limit does not take its calls from the named value keyless-calls-per-minute (through callsPerMinute)');
  }
  if (limit.attributes['remaining-calls-variable-name'] !== 'rateLimitRemaining' || limit.attributes['retry-after-variable-name'] !== 'rateLimitRetryAfter') {
    problems.push('api.xml: the keyless rate limit does not keep rateLimitRemaining and rateLimitRetryAfter for the headers and the 429 body');
  }
  const at = order(api);
  const edge = descendants(inbound, 'when').find((when) => /\{\{edge-secret\}\}/.test(when.attributes.condition ?? ''));
  const keyed = descendants(inbound, 'when').find((when) => /\{\{keyed-operations\}\}/.test(when.attributes.condition ?? ''));
  if ((edge && at(limit) < at(edge)) || (keyed && at(limit) < at(keyed))) problems.push('api.xml: the keyless rate limit runs before the key-route or edge checks');
  return problems;
};

/**
 * The x402 routes get a tighter counter of their own per client address, inside the keyless branch
 * (after the keyless counter, so both count): rate-limit-by-key for the operations of the named value
 * x402-operations, keyed by the client address with an x402 prefix (its own counter, not the keyless
 * one), at x402-calls-per-minute, with the variables the X-RateLimit headers and the 429 body read.
 */
export const checkX402RateLimit = (files: PolicyFiles): string[] => {
  const api = parsed(files).get('api.xml');
  const inbound = section(api, 'inbound');
  if (!api || !inbound) return ['api.xml: missing or not parsed'];
  const keyless = descendants(inbound, 'when').find((when) => /^@\(\s*context\.Subscription\s*==\s*null\s*\)$/.test(when.attributes.condition ?? ''));
  const x402 = keyless && descendants(keyless, 'when').find((when) => /"\{\{x402-operations\}\}"\.Contains\("\|" \+ context\.Operation\.Id \+ "\|"\)/.test(when.attributes.condition ?? ''));
  const limit = x402 && descendants(x402, 'rate-limit-by-key')[0];
  if (!x402 || !limit) return ['api.xml: the x402 routes (x402-operations) get no rate-limit-by-key of their own among the calls without a key'];
  const problems: string[] = [];
  const key = limit.attributes['counter-key'] ?? '';
  if (!CLIENT_ADDRESS.test(key) || !/^@\("x402:" \+/.test(key)) problems.push('api.xml: the x402 rate limit is not its own counter per client address ("x402:" + the address)');
  if (limit.attributes['renewal-period'] !== '60') problems.push('api.xml: the x402 rate limit renewal-period is not 60 seconds');
  const quota = descendants(x402, 'set-variable').find((element) => element.attributes.name === 'callsPerMinute');
  if (!quota || quota.attributes.value !== '@({{x402-calls-per-minute}})' || !/callsPerMinute/.test(limit.attributes.calls ?? '')) {
    problems.push('api.xml: the x402 rate limit does not take its calls from the named value x402-calls-per-minute (through callsPerMinute)');
  }
  if (limit.attributes['remaining-calls-variable-name'] !== 'rateLimitRemaining' || limit.attributes['retry-after-variable-name'] !== 'rateLimitRetryAfter') {
    problems.push('api.xml: the x402 rate limit does not keep rateLimitRemaining and rateLimitRetryAfter for the headers and the 429 body');
  }
  const at = order(api);
  const general = descendants(keyless, 'rate-limit-by-key')[0];
  if (general === limit || (general && at(limit) < at(general))) problems.push('api.xml: the x402 rate limit replaces or precedes the keyless one; both must count');
  return problems;
};

/**
 * Bodies over the backend's limit end at the gateway with 413 payload_too_large: a declared
 * Content-Length over it is refused, validate-content checks the size with action prevent, both before
 * the x-api-key replay and the backend; the global on-error turns validate-content's refusal into 413.
 */
export const checkBodyLimit = (files: PolicyFiles, context: Pick<PolicyContext, 'maxBodyBytes'>): string[] => {
  const problems: string[] = [];
  const docs = parsed(files);
  const api = docs.get('api.xml');
  const inbound = section(api, 'inbound');
  if (!api || !inbound) return ['api.xml: missing or not parsed'];
  const limit = String(context.maxBodyBytes);
  const tooLarge = (response: XmlElement | undefined) => !!response && statusOf(response) === 413 && /"error"\s*:\s*"payload_too_large"/.test(bodyOf(response));
  const declared = descendants(inbound, 'when').find((when) => /Content-Length/i.test(when.attributes.condition ?? ''));
  if (!declared || !new RegExp(`>\\s*${limit}\\b`).test(declared.attributes.condition ?? '') || !tooLarge(childElements(declared, 'return-response')[0])) {
    problems.push(`api.xml: a declared Content-Length over ${limit} bytes is not answered 413 payload_too_large`);
  }
  const validate = descendants(inbound, 'validate-content')[0];
  if (!validate || validate.attributes['max-size'] !== limit || validate.attributes['size-exceeded-action'] !== 'prevent') {
    problems.push(`api.xml: no validate-content with max-size ${limit} and size-exceeded-action prevent`);
  }
  const at = order(api);
  const first = (name: string) => descendants(inbound, name)[0];
  for (const [name, what] of [['send-request', 'the x-api-key replay'], ['set-backend-service', 'the backend']] as const) {
    const later = first(name);
    if (later && [declared, validate].some((check) => check && at(check) > at(later))) problems.push(`api.xml: the body size is checked after ${what}`);
  }
  const onError = section(docs.get('global.xml'), 'on-error');
  const refused = onError && descendants(onError, 'when').find((when) => /context\.LastError\.Source\s*==\s*"validate-content"/.test(when.attributes.condition ?? ''));
  if (!refused || !tooLarge(childElements(refused, 'return-response')[0])) problems.push('global.xml: a validate-content refusal is not answered 413 payload_too_large');
  return problems;
};

const statusOf = (response: XmlElement) => Number(descendants(response, 'set-status')[0]?.attributes.code);
const bodyOf = (response: XmlElement) => {
  const body = descendants(response, 'set-body')[0];
  return body ? textOf(body).trim() : '';
};

/**
 * Every answer the gateway writes is the interface document's error shape with a code the backend
 * also uses, at that code's status, as JSON, with the correlation id; and 401, 403, 404 and 429 exist.
 */
export const checkErrorBodies = (files: PolicyFiles, context: Pick<PolicyContext, 'httpStatusOf'>): string[] => {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [file, doc] of parsed(files)) {
    for (const response of descendants(doc, 'return-response')) {
      if (response.attributes['response-variable-name']) continue; // relays an answer this gateway produced
      const where = `${file}:${response.line}`;
      const status = statusOf(response);
      const body = bodyOf(response);
      let code: string | undefined;
      if (body.startsWith('@')) {
        code = /JProperty\("error",\s*"([a-z_]+)"\)/.exec(body)?.[1];
        if (!/JProperty\("message",/.test(body)) problems.push(`${where}: the body has no message`);
      } else {
        try {
          const json = JSON.parse(body) as { error?: unknown; message?: unknown };
          code = typeof json.error === 'string' ? json.error : undefined;
          if (typeof json.message !== 'string' || !json.message) problems.push(`${where}: the body has no message`);
        } catch {
          problems.push(`${where}: the body is not JSON`);
        }
      }
      if (!code) {
        problems.push(`${where}: the body has no error code`);
        continue;
      }
      seen.add(code);
      if (!(code in context.httpStatusOf)) problems.push(`${where}: error code ${code} is not one of the service's codes`);
      else if (context.httpStatusOf[code] !== status) problems.push(`${where}: ${code} answered with ${status}; the service uses ${context.httpStatusOf[code]}`);
      if (!setHeaders(response, 'Content-Type').some((element) => /application\/json/.test(textOf(element)))) problems.push(`${where}: no JSON Content-Type`);
      if (!setHeaders(response, 'X-Correlation-Id').length) problems.push(`${where}: no X-Correlation-Id`);
    }
  }
  for (const code of ['unauthorized', 'forbidden', 'not_found', 'rate_limited']) if (!seen.has(code)) problems.push(`no policy answers ${code}`);
  return problems;
};

/**
 * CORS passes the x402 and SIWX request headers and exposes the x402 challenge and settlement headers
 * (a browser-based payer reads them), the correlation id and the rate-limit headers.
 */
export const checkCors = (files: PolicyFiles): string[] => {
  const problems: string[] = [];
  const global = parsed(files).get('global.xml');
  const cors = global && childElements(section(global, 'inbound')!)[0];
  if (!cors || cors.name !== 'cors') return ['global.xml: inbound does not begin with cors (preflights must end before anything else runs)'];
  const listed = (name: string) => (childElements(cors, name)[0] ? descendants(childElements(cors, name)[0]!, 'header').map((header) => lower(textOf(header).trim())) : []);
  const allowed = listed('allowed-headers');
  for (const header of ['X-PAYMENT', 'PAYMENT-SIGNATURE', 'SIGN-IN-WITH-X', 'x-csrf-token', 'Ocp-Apim-Subscription-Key', 'x-api-key', 'Content-Type', 'X-Correlation-Id']) {
    if (!allowed.includes(header.toLowerCase()) && !allowed.includes('*')) problems.push(`global.xml: CORS does not allow the request header ${header}`);
  }
  const exposed = listed('expose-headers');
  for (const header of ['PAYMENT-REQUIRED', 'PAYMENT-RESPONSE', 'X-PAYMENT-RESPONSE', 'X-Correlation-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
    if (!exposed.includes(header.toLowerCase())) problems.push(`global.xml: CORS does not expose ${header}`);
  }
  const origins = descendants(cors, 'origin').map((origin) => textOf(origin).trim());
  if (cors.attributes['allow-credentials'] === 'true' && origins.includes('*')) problems.push('global.xml: CORS with credentials cannot allow every origin');
  if (!origins.includes('__ALLOWED_ORIGINS__')) problems.push('global.xml: CORS origins are not the placeholder apim.bicep fills in');
  return problems;
};

/** The backend is the Function App, called with the function key from the Key Vault-backed named value. */
export const checkBackend = (files: PolicyFiles): string[] => {
  const problems: string[] = [];
  const inbound = section(parsed(files).get('api.xml'), 'inbound');
  if (!inbound || !descendants(inbound, 'set-backend-service').some((element) => element.attributes['backend-id'] === 'function-app')) {
    problems.push('api.xml: the backend is not set to function-app');
  }
  const key = setHeaders(inbound, 'x-functions-key')[0];
  if (!key || key.attributes['exists-action'] !== 'override' || textOf(key).trim() !== '{{function-key}}') {
    problems.push('api.xml: x-functions-key is not set from the named value {{function-key}}');
  }
  return problems;
};

/** X-Correlation-Id: a valid incoming one (the backend's rule) is echoed, else the request id; on every answer. */
export const checkCorrelationId = (files: PolicyFiles, context: Pick<PolicyContext, 'correlationPattern'>): string[] => {
  const problems: string[] = [];
  const docs = parsed(files);
  const fragment = docs.get('fragments/correlation-id.xml');
  const variable = fragment && descendants(fragment, 'set-variable').find((element) => element.attributes.name === 'correlationId');
  if (!variable) problems.push('fragments/correlation-id.xml: does not set correlationId');
  else {
    const value = variable.attributes.value ?? '';
    if (!value.includes(`Regex.IsMatch(incoming, "${context.correlationPattern}")`)) problems.push(`fragments/correlation-id.xml: the id rule differs from the backend's ${context.correlationPattern}`);
    if (!/context\.RequestId/.test(value)) problems.push('fragments/correlation-id.xml: no fallback to context.RequestId');
    if (!/GetValueOrDefault\("X-Correlation-Id"/.test(value)) problems.push('fragments/correlation-id.xml: does not read the incoming X-Correlation-Id');
  }
  const includes = (file: string, name: string) =>
    !!section(docs.get(file), name) && descendants(section(docs.get(file), name)!, 'include-fragment').some((element) => element.attributes['fragment-id'] === 'correlation-id');
  for (const [file, name] of [['global.xml', 'inbound'], ['global.xml', 'on-error'], ['not-found.xml', 'inbound']] as const) {
    if (!includes(file, name)) problems.push(`${file}: ${name} does not work out the correlation id`);
  }
  for (const name of ['inbound', 'outbound']) {
    if (!setHeaders(section(docs.get('global.xml'), name), 'X-Correlation-Id').some((element) => /correlationId/.test(textOf(element)))) {
      problems.push(`global.xml: ${name} does not set X-Correlation-Id`);
    }
  }
  return problems;
};

/** The x-api-key alias: a key route called with it alone is replayed with the key in Ocp-Apim-Subscription-Key. */
export const checkKeyAlias = (files: PolicyFiles): string[] => {
  const api = parsed(files).get('api.xml');
  const keyed = api && descendants(section(api, 'inbound')!, 'when').find((when) => /context\.Subscription == null/.test(when.attributes.condition ?? '') && /\{\{keyed-operations\}\}/.test(when.attributes.condition ?? ''));
  if (!keyed) return ['api.xml: key routes called without a key are not recognised (context.Subscription == null and {{keyed-operations}})'];
  const problems: string[] = [];
  const replay = descendants(keyed, 'send-request')[0];
  const header = replay && setHeaders(replay, 'Ocp-Apim-Subscription-Key')[0];
  if (!replay || replay.attributes.mode !== 'copy' || !header || !/GetValueOrDefault\("x-api-key"/.test(textOf(header))) {
    problems.push('api.xml: a call with x-api-key is not replayed with the key in Ocp-Apim-Subscription-Key');
  } else {
    if (!deletesHeader(replay, 'x-api-key')) problems.push('api.xml: the replay keeps x-api-key (it could loop)');
    const relay = descendants(keyed, 'return-response').find((response) => response.attributes['response-variable-name'] === replay.attributes['response-variable-name']);
    if (!relay) problems.push("api.xml: the replay's answer is not returned");
  }
  const refusal = descendants(keyed, 'return-response').find((response) => statusOf(response) === 401);
  if (!refusal) problems.push('api.xml: a key route without any key is not answered 401');
  return problems;
};

/** Every {{named value}} and fragment a policy uses is declared in apim.bicep. */
export const checkNamedValues = (files: PolicyFiles, context: Pick<PolicyContext, 'apimBicep'>): string[] => {
  const problems: string[] = [];
  const declared = (type: string) =>
    new Set(
      [...context.apimBicep.matchAll(new RegExp(`'Microsoft\\.ApiManagement/service/${type}@[^']+'\\s*=\\s*\\{\\s*parent:\\s*service\\s*name:\\s*'([^']+)'`, 'g'))].map((match) => match[1]!),
    );
  const namedValues = declared('namedValues');
  const fragments = declared('policyFragments');
  for (const [file, text] of Object.entries(files)) {
    for (const match of text.matchAll(/\{\{([^}]+)\}\}/g)) if (!namedValues.has(match[1]!)) problems.push(`${file}: named value ${match[1]} is not declared in apim.bicep`);
    for (const match of text.matchAll(/fragment-id="([^"]+)"/g)) if (!fragments.has(match[1]!)) problems.push(`${file}: fragment ${match[1]} is not declared in apim.bicep`);
  }
  for (const file of Object.keys(files)) {
    if (!context.apimBicep.includes(`'../policies/${file}'`)) problems.push(`${file}: apim.bicep does not load it`);
  }
  return problems;
};
