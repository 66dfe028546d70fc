import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_HEADER_PREFIX, DEFAULT_TOLERANCE_MS, verifyWebhook } from '../../shared/webhook-verify.mjs';

/** The receiver-side helper, against signatures computed here independently of the service's signer. */
const secret = 'key_test_4f1c';
const body = '{"event":"receipt.status_updated","receiptId":"r-1","status":"link_opened","metadata":{"note":"Café ☕"},"timestamp":1700000000000}';
const t = 1_700_000_000_123;
const v1 = (timestamp: number | string, bytes: string = body, key = secret) => createHmac('sha256', key).update(`${timestamp}.${bytes}`, 'utf8').digest('hex');
const header = (timestamp = t, bytes = body, key = secret) => `t=${timestamp},v1=${v1(timestamp, bytes, key)}`;
const headersWith = (value: string) => ({ 'x-service-signature-timestamped': value, 'x-service-delivery': 'd-1' });

describe('verifyWebhook', () => {
  it('accepts a fresh, correctly signed delivery and answers the parsed event, its time and delivery id', () => {
    expect(verifyWebhook({ body, headers: headersWith(header()), secret, now: t + 1_000 })).toEqual({
      ok: true,
      event: JSON.parse(body),
      timestamp: t,
      deliveryId: 'd-1',
    });
  });

  it('defaults to a 5-minute tolerance, the X-Service- prefix and the current time', () => {
    expect(DEFAULT_TOLERANCE_MS).toBe(300_000);
    expect(DEFAULT_HEADER_PREFIX).toBe('X-Service-');
    const now = Date.now();
    expect(verifyWebhook({ body, headers: headersWith(header(now)), secret })).toMatchObject({ ok: true });
    expect(verifyWebhook({ body, headers: headersWith(header(now - 300_500)), secret })).toEqual({ ok: false, reason: 'too_old' });
  });

  it('takes the body as a string, a Buffer, a Uint8Array or an ArrayBuffer (the exact bytes)', () => {
    const bytes = Buffer.from(body, 'utf8');
    for (const form of [body, bytes, new Uint8Array(bytes), bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)]) {
      expect(verifyWebhook({ body: form, headers: headersWith(header()), secret, now: t })).toMatchObject({ ok: true, timestamp: t });
    }
  });

  it('finds the header whatever its case, in a plain object or a fetch Headers', () => {
    expect(verifyWebhook({ body, headers: { 'X-Service-Signature-Timestamped': header() }, secret, now: t })).toMatchObject({ ok: true, deliveryId: null });
    expect(verifyWebhook({ body, headers: { 'X-SERVICE-SIGNATURE-TIMESTAMPED': [header()] }, secret, now: t })).toMatchObject({ ok: true });
    const fetchHeaders = new Headers({ 'X-Service-Signature-Timestamped': header(), 'X-Service-Delivery': 'd-2' });
    expect(verifyWebhook({ body, headers: fetchHeaders, secret, now: t })).toMatchObject({ ok: true, deliveryId: 'd-2' });
  });

  it('reads the header under a configured prefix, in any case', () => {
    const headers = { 'x-acme-signature-timestamped': header(), 'x-acme-delivery': 'd-3' };
    expect(verifyWebhook({ body, headers, secret, now: t, prefix: 'X-Acme-' })).toMatchObject({ ok: true, deliveryId: 'd-3' });
    expect(verifyWebhook({ body, headers, secret, now: t, prefix: 'x-ACME-' })).toMatchObject({ ok: true });
    expect(verifyWebhook({ body, headers, secret, now: t })).toEqual({ ok: false, reason: 'missing_header' });
  });

  it('missing_header: no timestamped signature header (the plain signature alone does not count)', () => {
    expect(verifyWebhook({ body, headers: {}, secret, now: t })).toEqual({ ok: false, reason: 'missing_header' });
    const plain = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    expect(verifyWebhook({ body, headers: { 'x-service-signature': plain, 'x-service-timestamp': String(t) }, secret, now: t })).toEqual({ ok: false, reason: 'missing_header' });
    expect(verifyWebhook({ body, headers: new Headers(), secret, now: t })).toEqual({ ok: false, reason: 'missing_header' });
    expect(verifyWebhook({ body, headers: { 'x-service-signature-timestamped': undefined }, secret, now: t })).toEqual({ ok: false, reason: 'missing_header' });
  });

  it.each([
    ['an empty value', ''],
    ['no t', `v1=${v1(t)}`],
    ['no v1', `t=${t}`],
    ['a t that is not a whole number of ms', `t=${t}.5,v1=${v1(t)}`],
    ['a negative t', `t=-${t},v1=${v1(t)}`],
    ['a hex t', `t=0x10,v1=${v1(t)}`],
    ['two t values', `t=${t},t=${t},v1=${v1(t)}`],
    ['a v1 that is not hex', `t=${t},v1=${'z'.repeat(64)}`],
    ['a short v1', `t=${t},v1=${v1(t).slice(0, 63)}`],
    ['a v1 with the sha256= prefix', `t=${t},v1=sha256=${v1(t)}`],
    ['a piece without =', `t=${t},v1=${v1(t)},junk`],
    ['the plain signature', `sha256=${v1(t)}`],
  ])('bad_format: %s', (_, value) => {
    expect(verifyWebhook({ body, headers: headersWith(value), secret, now: t })).toEqual({ ok: false, reason: 'bad_format' });
  });

  it('bad_format: the header twice (two values, or two spellings of its name)', () => {
    expect(verifyWebhook({ body, headers: { 'x-service-signature-timestamped': [header(), header()] }, secret, now: t })).toEqual({ ok: false, reason: 'bad_format' });
    expect(verifyWebhook({ body, headers: { 'x-service-signature-timestamped': header(), 'X-Service-Signature-Timestamped': header() }, secret, now: t })).toEqual({ ok: false, reason: 'bad_format' });
    const twice = new Headers();
    twice.append('x-service-signature-timestamped', header());
    twice.append('x-service-signature-timestamped', header());
    expect(verifyWebhook({ body, headers: twice, secret, now: t })).toEqual({ ok: false, reason: 'bad_format' });
  });

  it.each([
    ['another key', header(t, body, 'another-key')],
    ['a changed body', header(t, body.replace('link_opened', 'paid'))],
    ['a re-serialized body', header(t, JSON.stringify(JSON.parse(body), null, 1))],
    ['another t than the one signed', `t=${t + 1},v1=${v1(t)}`],
    ['the body signed without the timestamp', `t=${t},v1=${createHmac('sha256', secret).update(body).digest('hex')}`],
  ])('bad_signature: %s', (_, value) => {
    expect(verifyWebhook({ body, headers: headersWith(value), secret, now: t })).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('accepts any one matching v1 (several while a key changes), in upper-case hex too, and skips unknown schemes', () => {
    const value = `t=${t},v1=${v1(t, body, 'old-key')},v1=${v1(t).toUpperCase()},v0=whatever`;
    expect(verifyWebhook({ body, headers: headersWith(value), secret, now: t })).toMatchObject({ ok: true });
    expect(verifyWebhook({ body, headers: headersWith(` t=${t} , v1=${v1(t)} `), secret, now: t })).toMatchObject({ ok: true });
  });

  it('checks the signature before the age: a forged old or future delivery is bad_signature', () => {
    const forged = `t=${t},v1=${v1(t, body, 'forger')}`;
    expect(verifyWebhook({ body, headers: headersWith(forged), secret, now: t + 3_600_000 })).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verifyWebhook({ body, headers: headersWith(forged), secret, now: t - 3_600_000 })).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('too_old: accepted at exactly the tolerance, refused 1 ms past it', () => {
    const headers = headersWith(header());
    expect(verifyWebhook({ body, headers, secret, now: t + 300_000 })).toMatchObject({ ok: true });
    expect(verifyWebhook({ body, headers, secret, now: t + 300_001 })).toEqual({ ok: false, reason: 'too_old' });
    expect(verifyWebhook({ body, headers, secret, now: t + 10_000, toleranceMs: 10_000 })).toMatchObject({ ok: true });
    expect(verifyWebhook({ body, headers, secret, now: t + 10_001, toleranceMs: 10_000 })).toEqual({ ok: false, reason: 'too_old' });
  });

  it('in_future: accepted at exactly the tolerance ahead, refused 1 ms past it', () => {
    const headers = headersWith(header());
    expect(verifyWebhook({ body, headers, secret, now: t - 300_000 })).toMatchObject({ ok: true });
    expect(verifyWebhook({ body, headers, secret, now: t - 300_001 })).toEqual({ ok: false, reason: 'in_future' });
    expect(verifyWebhook({ body, headers, secret, now: t, toleranceMs: 0 })).toMatchObject({ ok: true });
    expect(verifyWebhook({ body, headers, secret, now: t - 1, toleranceMs: 0 })).toEqual({ ok: false, reason: 'in_future' });
  });

  it('bad_body: a correctly signed body that is not JSON', () => {
    expect(verifyWebhook({ body: 'not json', headers: headersWith(header(t, 'not json')), secret, now: t })).toEqual({ ok: false, reason: 'bad_body' });
  });

  it('throws for a call that cannot be right (no secret, a bad tolerance or time)', () => {
    const headers = headersWith(header());
    expect(() => verifyWebhook({ body, headers, secret: '', now: t })).toThrow(TypeError);
    expect(() => verifyWebhook({ body, headers, secret: undefined as unknown as string, now: t })).toThrow(TypeError);
    expect(() => verifyWebhook({ body, headers, secret, now: t, toleranceMs: -1 })).toThrow(TypeError);
    expect(() => verifyWebhook({ body, headers, secret, now: t, toleranceMs: Number.NaN })).toThrow(TypeError);
    expect(() => verifyWebhook({ body, headers, secret, now: Number.NaN })).toThrow(TypeError);
    expect(() => verifyWebhook({ body: { not: 'bytes' } as unknown as string, headers, secret, now: t })).toThrow(TypeError);
  });

  it('the README’s receiver runs as it stands from the repository’s root: accepts a fresh delivery, refuses a 6-minute-old one', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const snippet = /```js\n(\/\/ receiver\.mjs[\s\S]*?)```/.exec(readFileSync(`${root}README.md`, 'utf8'))?.[1];
    expect(snippet).toBeDefined();
    const output = await new Promise<string>((resolve, reject) => {
      const child = execFile(process.execPath, ['--input-type=module'], { cwd: root, timeout: 20_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
      child.stdin!.end(snippet);
    });
    expect(output).toBe('200 order-1001 link_opened\n400 too_old\n');
  });
});
