/**
 * The API Management policies: well-formed XML, and the behaviour the gateway owes the service
 * (the service's check order, the interface document's Authentication and Errors). The second half feeds the same
 * checks broken copies to show that each one can fail.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpStatusOf } from '../../shared/http/errors';
import { MAX_BODY_BYTES } from '../../shared/http/headers';
import { brokenCopy, readPolicyFiles, repoRoot } from './support/files';
import {
  checkBackend,
  checkBodyLimit,
  checkCorrelationId,
  checkCors,
  checkEdgeSecret,
  checkErrorBodies,
  checkHeaderHygiene,
  checkKeyAlias,
  checkKeylessRateLimit,
  checkNamedValues,
  checkRateLimit,
  checkSubscriptionStamp,
  checkClientAddress,
  checkWellFormed,
  checkX402RateLimit,
  type PolicyContext,
} from './support/policy-checks';
import { XmlSyntaxError, parseXml, textOf } from './support/xml';

const files = readPolicyFiles();
const headersSource = readFileSync(join(repoRoot, 'shared/http/headers.ts'), 'utf8');
const context: PolicyContext = {
  httpStatusOf,
  correlationPattern: /const CORRELATION_PATTERN = \/(.+)\/;/.exec(headersSource)?.[1] ?? 'not found in shared/http/headers.ts',
  apimBicep: readFileSync(join(repoRoot, 'infra/modules/apim.bicep'), 'utf8'),
  maxBodyBytes: MAX_BODY_BYTES,
};

describe('API Management policies', () => {
  it('are the files apim.bicep loads', () => {
    expect(Object.keys(files).sort()).toEqual(['api.xml', 'fragments/correlation-id.xml', 'global.xml', 'not-found-options.xml', 'not-found.xml', 'product-plan.xml']);
  });

  it('are well-formed, with the four sections and <base /> where scope order needs it', () => {
    expect(checkWellFormed(files)).toEqual([]);
  });

  it("remove wallet hints and the client's x-subscription-id; keys and the edge secret never reach the backend", () => {
    expect(checkHeaderHygiene(files)).toEqual([]);
  });

  it('stamp x-subscription-id from context.Subscription.Id after the checks', () => {
    expect(checkSubscriptionStamp(files)).toEqual([]);
  });

  it('decide the client address once and tell the backend in x-client-address, over any client value', () => {
    expect(checkClientAddress(files)).toEqual([]);
  });

  it('require the edge secret when an edge proxy is configured and refuse it otherwise', () => {
    expect(checkEdgeSecret(files)).toEqual([]);
  });

  it('rate-limit per subscription at the plan quota, with X-RateLimit headers and the 429 body', () => {
    expect(checkRateLimit(files)).toEqual([]);
  });

  it('limit calls without a key per client address, at keyless-calls-per-minute, after the key-route and edge checks', () => {
    expect(checkKeylessRateLimit(files)).toEqual([]);
  });

  it('limit the x402 routes per client address at x402-calls-per-minute, a counter of their own besides the keyless one', () => {
    expect(checkX402RateLimit(files)).toEqual([]);
  });

  it("answer 413 payload_too_large to bodies over the backend's limit before the replay and the backend", () => {
    expect(context.maxBodyBytes).toBe(262_144);
    expect(checkBodyLimit(files, context)).toEqual([]);
  });

  it("answer in the interface document's error shape, with the service's codes and statuses", () => {
    expect(checkErrorBodies(files, context)).toEqual([]);
  });

  it('pass the x402 and Sign-In-With-X headers through CORS and expose the x402 challenge and settlement, correlation and rate-limit headers', () => {
    expect(checkCors(files)).toEqual([]);
  });

  it("call the Function App with the function key from the Key Vault-backed named value", () => {
    expect(checkBackend(files)).toEqual([]);
  });

  it("echo a valid X-Correlation-Id by the backend's rule, else the request id, on every answer", () => {
    expect(context.correlationPattern).toBe('^[A-Za-z0-9._:-]{1,128}$');
    expect(checkCorrelationId(files, context)).toEqual([]);
  });

  it('accept x-api-key as an alias of the subscription key', () => {
    expect(checkKeyAlias(files)).toEqual([]);
  });

  it('use only named values and fragments that apim.bicep declares, and every file is loaded by it', () => {
    expect(checkNamedValues(files, context)).toEqual([]);
  });
});

describe('the policy checks fail on a broken copy', () => {
  it('a policy removed: the rate limit', () => {
    const copy = brokenCopy(files, 'api.xml', /<rate-limit-by-key [^>]*\/>/g);
    expect(checkRateLimit(copy)).toEqual(['api.xml: no rate-limit-by-key in inbound']);
    const plan = brokenCopy(files, 'api.xml', /<rate-limit-by-key [^>]*counter-key="@\(context\.Subscription\.Id\)"[^>]*\/>/);
    expect(checkRateLimit(plan)).toEqual(['api.xml: rate-limit-by-key is not keyed by context.Subscription.Id']);
  });

  it('a policy removed or changed: the keyless rate limit', () => {
    const removed = brokenCopy(files, 'api.xml', /<when condition="@\(context\.Subscription == null\)">[\s\S]*?<\/choose>\s*<\/when>/);
    expect(checkKeylessRateLimit(removed)).toEqual(['api.xml: calls without a key (context.Subscription == null) get no rate-limit-by-key']);
    const shared = brokenCopy(files, 'api.xml', /counter-key='@\(\(string\)context\.Variables\["clientAddress"\]\)'/, 'counter-key="keyless"');
    expect(checkKeylessRateLimit(shared)).toEqual(['api.xml: the keyless rate limit is not keyed by the client address (clientAddress)']);
    const fixed = brokenCopy(files, 'api.xml', 'value="@({{keyless-calls-per-minute}})"', 'value="@(120)"');
    expect(checkKeylessRateLimit(fixed)).toEqual(['api.xml: the keyless rate limit does not take its calls from the named value keyless-calls-per-minute (through callsPerMinute)']);
  });

  it('a policy removed or changed: the x402 rate limit', () => {
    const removed = brokenCopy(files, 'api.xml', /<choose>\s*<when condition='@\("\{\{x402-operations\}\}"[\s\S]*?<\/choose>/);
    expect(checkX402RateLimit(removed)).toEqual(['api.xml: the x402 routes (x402-operations) get no rate-limit-by-key of their own among the calls without a key']);
    const shared = brokenCopy(files, 'api.xml', `counter-key='@("x402:" + (string)`, `counter-key='@((string)`);
    expect(checkX402RateLimit(shared)).toEqual(['api.xml: the x402 rate limit is not its own counter per client address ("x402:" + the address)']);
    const keyless = brokenCopy(files, 'api.xml', 'value="@({{x402-calls-per-minute}})"', 'value="@({{keyless-calls-per-minute}})"');
    expect(checkX402RateLimit(keyless)).toEqual(['api.xml: the x402 rate limit does not take its calls from the named value x402-calls-per-minute (through callsPerMinute)']);
    const instead = brokenCopy(files, 'api.xml', /<rate-limit-by-key [^>]*counter-key='@\(\(string\)context\.Variables\["clientAddress"\]\)'[^>]*\/>/);
    expect(checkX402RateLimit(instead)).toEqual(['api.xml: the x402 rate limit replaces or precedes the keyless one; both must count']);
  });

  it('a policy removed or changed: the body size limit', () => {
    const declared = brokenCopy(files, 'api.xml', /<choose>\s*<when condition='@\{\s*long declared;[\s\S]*?<\/choose>/);
    expect(checkBodyLimit(declared, context)).toEqual(['api.xml: a declared Content-Length over 262144 bytes is not answered 413 payload_too_large']);
    const validate = brokenCopy(files, 'api.xml', /<validate-content [^>]*\/>/, '<validate-content unspecified-content-type-action="ignore" max-size="262144" size-exceeded-action="detect" />');
    expect(checkBodyLimit(validate, context)).toEqual(['api.xml: no validate-content with max-size 262144 and size-exceeded-action prevent']);
    const onError = brokenCopy(files, 'global.xml', /<when condition='@\(context\.LastError\.Source == "validate-content"\)'>[\s\S]*?<\/when>/);
    expect(checkBodyLimit(onError, context)).toEqual(['global.xml: a validate-content refusal is not answered 413 payload_too_large']);
  });

  it('a policy removed: the wallet query parameter strip', () => {
    const copy = brokenCopy(files, 'global.xml', /<set-query-parameter name="wallet" exists-action="delete" \/>/);
    expect(checkHeaderHygiene(copy)).toEqual(['global.xml: inbound does not remove the wallet query parameter']);
  });

  it('a policy removed: the x-client-address stamp', () => {
    const copy = brokenCopy(files, 'api.xml', /<set-header name="x-client-address" exists-action="override">[\s\S]*?<\/set-header>/);
    expect(checkClientAddress(copy)).toEqual(['api.xml: x-client-address is not set (override) from clientAddress']);
  });

  it('a policy removed: the x-subscription-id stamp', () => {
    const copy = brokenCopy(files, 'api.xml', /<choose>\s*<when condition="@\(context\.Subscription != null\)">[\s\S]*?<\/choose>/);
    expect(checkSubscriptionStamp(copy)).toEqual(['api.xml: x-subscription-id is not set (override) from context.Subscription.Id']);
  });

  it('a policy removed: the edge-secret refusal when no edge proxy is configured', () => {
    const copy = brokenCopy(files, 'api.xml', /<when condition='@\("\{\{edge-proxy-enabled\}\}" != "true"[\s\S]*?<\/when>/);
    expect(checkEdgeSecret(copy)).toEqual(['api.xml: without an edge proxy, a client-sent x-edge-secret is not refused with 403 forbidden']);
  });

  it('a policy removed: an x402 header from CORS', () => {
    const copy = brokenCopy(files, 'global.xml', '<header>X-PAYMENT</header>');
    expect(checkCors(copy)).toEqual(['global.xml: CORS does not allow the request header X-PAYMENT']);
    const siwx = brokenCopy(files, 'global.xml', '<header>SIGN-IN-WITH-X</header>');
    expect(checkCors(siwx)).toEqual(['global.xml: CORS does not allow the request header SIGN-IN-WITH-X']);
    const exposed = brokenCopy(files, 'global.xml', /<header>PAYMENT-RESPONSE<\/header>\s*/);
    expect(checkCors(exposed)).toEqual(['global.xml: CORS does not expose PAYMENT-RESPONSE']);
    const challenge = brokenCopy(files, 'global.xml', /<expose-headers>[\s\S]*?<\/expose-headers>/, '<expose-headers><header>X-Correlation-Id</header><header>X-RateLimit-Limit</header><header>X-RateLimit-Remaining</header><header>X-RateLimit-Reset</header></expose-headers>');
    expect(checkCors(challenge)).toEqual(['PAYMENT-REQUIRED', 'PAYMENT-RESPONSE', 'X-PAYMENT-RESPONSE'].map((header) => `global.xml: CORS does not expose ${header}`));
  });

  it('a policy removed: the function key', () => {
    const copy = brokenCopy(files, 'api.xml', /<set-header name="x-functions-key"[\s\S]*?<\/set-header>/);
    expect(checkBackend(copy)).toEqual(['api.xml: x-functions-key is not set from the named value {{function-key}}']);
  });

  it('a policy removed: the x-api-key replay', () => {
    const copy = brokenCopy(files, 'api.xml', /<send-request[\s\S]*?<\/send-request>/);
    expect(checkKeyAlias(copy)).toEqual(['api.xml: a call with x-api-key is not replayed with the key in Ocp-Apim-Subscription-Key']);
  });

  it('XML that is not well-formed', () => {
    const copy = brokenCopy(files, 'product-plan.xml', '</outbound>');
    expect(checkWellFormed(copy)).toEqual([expect.stringMatching(/^product-plan\.xml: not well-formed XML: line \d+: <\/policies> closes <outbound>/)]);
    const raw = brokenCopy(files, 'api.xml', '&amp;&amp; context.Request.Headers.ContainsKey("x-edge-secret")', '&& context.Request.Headers.ContainsKey("x-edge-secret")');
    expect(checkWellFormed(raw)).toEqual([expect.stringMatching(/^api\.xml: not well-formed XML: line \d+: "&" must start a reference/)]);
  });

  it('a gateway answer outside the error shape', () => {
    const copy = brokenCopy(files, 'global.xml', '{"error":"unauthorized","message":"missing or invalid subscription key"}', '{"statusCode":401,"message":"Access denied"}');
    expect(checkErrorBodies(copy, context)).toEqual([expect.stringMatching(/^global\.xml:\d+: the body has no error code$/)]);
    const status = brokenCopy(files, 'api.xml', '<set-status code="401" reason="Unauthorized" />', '<set-status code="403" reason="Forbidden" />');
    expect(checkErrorBodies(status, context)).toEqual([expect.stringMatching(/^api\.xml:\d+: unauthorized answered with 403; the service uses 401$/)]);
  });

  it('a named value the templates do not declare, or a correlation rule that differs from the backend', () => {
    const copy = brokenCopy(files, 'api.xml', '{{function-key}}', '{{functions-key}}');
    expect(checkNamedValues(copy, context)).toEqual(['api.xml: named value functions-key is not declared in apim.bicep']);
    const rule = brokenCopy(files, 'fragments/correlation-id.xml', '{1,128}', '{1,256}');
    expect(checkCorrelationId(rule, context)).toEqual([expect.stringContaining("the id rule differs from the backend's")]);
  });
});

describe('the XML parser is strict', () => {
  it('decodes references and CDATA', () => {
    const doc = parseXml('<?xml version="1.0"?>\n<!-- c --><a x=\'1 &lt; 2 &amp;&amp; "y"\'>t &#x41;<![CDATA[<raw>&]]><b/></a>');
    expect(doc.attributes.x).toBe('1 < 2 && "y"');
    expect(textOf(doc)).toBe('t A<raw>&');
  });

  it.each([
    ['<a><b></a>', '</a> closes <b>'],
    ['<a x="1" x="2"/>', 'duplicate attribute x'],
    ['<a x=1/>', 'must be quoted'],
    ['<a x="1 < 2"/>', '"<" must be escaped'],
    ['<a>&nbsp;</a>', 'unknown entity'],
    ['<a/><b/>', 'content after the root element'],
    ['<a><!-- a -- b --></a>', '"--" is not allowed'],
    ['<a x="1"y="2"/>', 'expected whitespace'],
    ['<a>', 'is not closed'],
  ])('rejects %s', (source, message) => {
    expect(() => parseXml(source)).toThrow(XmlSyntaxError);
    expect(() => parseXml(source)).toThrow(message);
  });
});
