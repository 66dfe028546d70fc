import jwt from 'jsonwebtoken';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { hs256SessionTokens } from '../../shared/adapters/jwt/session-tokens';
import { memoryDeps, setDeps } from '../../shared/composition';
import { invoke, type Answer } from '../support/http';
import { login, newNonce, signInAs as signInWallet } from '../support/session';
import { signedSignIn, testWallets } from '../support/siwe';

const ORIGIN = 'http://localhost:7071';
let now = Date.parse('2026-11-22T10:00:00Z');
let deps: AppDeps;

const clock = { now: () => now };

beforeEach(() => {
  now = Date.parse('2026-11-22T10:00:00Z');
  deps = memoryDeps({ clock, sessionTokens: hs256SessionTokens('test-secret-test-secret-test-secret!', clock) });
  deps = { ...deps, settings: { ...deps.settings, adminWallets: [testWallets.admin.address.toLowerCase()] } };
  setDeps(deps);
});

const nonce = newNonce;
const signInAs = async (wallet = testWallets.merchant) => (await signInWallet(wallet, now)).answer;

/** Headers a browser on the configured site sends with the session's cookies. */
const browser = (session: Answer, extra: Record<string, string> = {}) => ({
  cookie: `cb_auth_token=${session.cookies!.cb_auth_token!.value}; cb_csrf_token=${session.cookies!.cb_csrf_token!.value}`,
  origin: ORIGIN,
  'x-csrf-token': session.cookies!.cb_csrf_token!.value,
  ...extra,
});

const me = (headers: Record<string, string>) => invoke('auth-me', { path: '/api/auth/me', headers });
const logout = (headers: Record<string, string>) => invoke('auth-logout', { method: 'POST', path: '/api/auth/logout', headers });

describe('wallet sign-in (EIP-4361)', () => {
  it('issues a nonce with what the message must say', async () => {
    const answer = await invoke('auth-nonce', { path: '/api/auth/nonce' });
    expect(answer.json).toEqual({ nonce: expect.stringMatching(/^[a-z0-9]{57}$/), expiresAt: now + 300_000, domain: 'localhost:7071', uri: ORIGIN, chainId: 31337 });
  });

  it('signs in: a session cookie (HttpOnly, SameSite=Strict, 24 h) and a readable CSRF cookie', async () => {
    const answer = await signInAs();
    expect(answer.json).toEqual({ ok: true, wallet: testWallets.merchant.address.toLowerCase(), roles: ['merchant'], expiresAt: now + 86_400_000, csrfToken: expect.any(String) });
    expect(answer.cookies!.cb_auth_token).toMatchObject({ httpOnly: true, sameSite: 'Strict', maxAge: 86_400, secure: false });
    expect(answer.cookies!.cb_csrf_token).toMatchObject({ httpOnly: false, sameSite: 'Strict', value: answer.json.csrfToken });
    expect(jwt.decode(answer.cookies!.cb_auth_token!.value, { complete: true })?.header.alg).toBe('HS256');
    expect((await me(browser(answer))).json).toEqual({ wallet: testWallets.merchant.address.toLowerCase(), roles: ['merchant'], expiresAt: now + 86_400_000 });
  });

  it('gives platform admins the admin role', async () => {
    expect((await signInAs(testWallets.admin)).json.roles).toEqual(['merchant', 'admin']);
  });

  it('refuses a replayed nonce with 401', async () => {
    const signed = await signedSignIn(testWallets.merchant, { nonce: await nonce(), issuedAt: new Date(now) });
    expect((await login(signed)).status).toBe(200);
    expect(await login(signed)).toMatchObject({ status: 401, json: { error: 'unauthorized' } });
  });

  it('stores nothing when it issues nonces: anonymous callers cannot grow the store', async () => {
    const writes: string[] = [];
    const store = deps.claims;
    const counting: AppDeps['claims'] = {
      get: (partition, id) => store.get(partition, id),
      create: (partition, document) => (writes.push(partition), store.create(partition, document)),
      replace: (partition, document, etag) => (writes.push(partition), store.replace(partition, document, etag)),
      upsert: (partition, document) => (writes.push(partition), store.upsert(partition, document)),
      delete: (partition, id, etag) => store.delete(partition, id, etag),
    };
    setDeps((deps = { ...deps, claims: counting }));
    for (let i = 0; i < 200; i++) expect((await invoke('auth-nonce', { path: '/api/auth/nonce' })).status).toBe(200);
    expect(writes).toEqual([]);
    // Only a sign-in records its (used) nonce, with the nonce's own expiry.
    expect((await signInAs()).status).toBe(200);
    expect(writes).toHaveLength(1);
    const used = await deps.claims.get(writes[0]!, writes[0]!);
    expect(used?.value.expiresAt).toBeLessThanOrEqual(now + 300_000);
  });

  it('refuses a nonce whose expiry or MAC was altered, and one signed with another secret', async () => {
    const value = await nonce();
    const later = `${value.slice(0, 16)}${(now + 3_600_000).toString(36).padStart(9, '0')}${value.slice(25)}`;
    const flipped = `${value.slice(0, -1)}${value.endsWith('0') ? '1' : '0'}`;
    for (const forged of [later, flipped]) {
      expect(await login(await signedSignIn(testWallets.merchant, { nonce: forged, issuedAt: new Date(now) }))).toMatchObject({ status: 401, json: { error: 'unauthorized' } });
    }
    const foreign = hs256SessionTokens('another-secret-another-secret-another!', clock);
    setDeps({ ...deps, sessionTokens: foreign });
    const theirs = await nonce();
    setDeps(deps);
    expect((await login(await signedSignIn(testWallets.merchant, { nonce: theirs, issuedAt: new Date(now) }))).status).toBe(401);
    expect((await login(await signedSignIn(testWallets.merchant, { nonce: value, issuedAt: new Date(now) }))).status).toBe(200);
  });

  it('refuses a nonce it never issued, or one older than 5 minutes', async () => {
    expect((await login(await signedSignIn(testWallets.merchant, { nonce: 'madeupnonce123', issuedAt: new Date(now) }))).status).toBe(401);
    const stale = await nonce();
    now += 301_000;
    expect((await login(await signedSignIn(testWallets.merchant, { nonce: stale, issuedAt: new Date(now) }))).status).toBe(401);
  });

  it.each([
    ['another domain', { domain: 'evil.example' }],
    ['a URI on another origin', { uri: 'https://evil.example/login' }],
    ['another chain', { chainId: 8453 }],
  ])('refuses a message for %s with 401, leaving the nonce usable', async (_, fields) => {
    const value = await nonce();
    expect(await login(await signedSignIn(testWallets.merchant, { nonce: value, issuedAt: new Date(now), ...fields }))).toMatchObject({ status: 401, json: { error: 'unauthorized' } });
    expect((await login(await signedSignIn(testWallets.merchant, { nonce: value, issuedAt: new Date(now) }))).status).toBe(200);
  });

  it('refuses an expired message and a signature by another wallet with 401', async () => {
    const expired = await signedSignIn(testWallets.merchant, { nonce: await nonce(), issuedAt: new Date(now - 120_000), expirationTime: new Date(now - 60_000) });
    expect((await login(expired)).status).toBe(401);
    const forged = await signedSignIn(testWallets.merchant, { nonce: await nonce(), issuedAt: new Date(now) }, testWallets.other);
    expect((await login(forged)).status).toBe(401);
  });

  it('answers 400 invalid_input for a body that is not a sign-in message', async () => {
    expect(await login({ message: 'hello', signature: '0x1234' })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'message' } });
    expect(await login({ message: 'x', signature: 'nothex' } as never)).toMatchObject({ status: 400, json: { field: 'signature' } });
  });
});

describe('sign-in only from this site, as JSON (login CSRF)', () => {
  const post = async (headers: Record<string, string>, body?: string) =>
    invoke('auth-login', { method: 'POST', path: '/api/auth/login', headers, body: body ?? JSON.stringify(await signedSignIn(testWallets.merchant, { nonce: await nonce(), issuedAt: new Date(now) })) });
  const json = { 'content-type': 'application/json' };

  it('refuses another site’s Origin with 403 forbidden, sets no cookie and leaves the nonce unspent', async () => {
    const body = JSON.stringify(await signedSignIn(testWallets.merchant, { nonce: await nonce(), issuedAt: new Date(now) }));
    for (const origin of ['https://evil.example', 'http://localhost:7072', 'https://localhost:7071', 'http://localhost:7071.evil.example']) {
      const answer = await post({ ...json, origin }, body);
      expect(answer, origin).toMatchObject({ status: 403, json: { error: 'forbidden' } });
      expect(answer.cookies).toEqual({});
    }
    expect(await post({ ...json, origin: ORIGIN }, body)).toMatchObject({ status: 200, json: { ok: true } });
  });

  it('refuses Sec-Fetch-Site cross-site or same-site without an Origin (or with Origin null), and a post with neither', async () => {
    for (const headers of [{ 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }, { 'sec-fetch-site': 'cross-site', origin: 'null' }, { 'sec-fetch-site': 'none' }, {}] as Record<string, string>[]) {
      expect(await post({ ...json, ...headers }), JSON.stringify(headers)).toMatchObject({ status: 403, json: { error: 'forbidden' } });
    }
  });

  it('refuses a body that is not sent as JSON with 400 invalid_input, even from this site: a cross-site form can send text/plain', async () => {
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', '']) {
      const answer = await post({ origin: ORIGIN, 'content-type': type });
      expect(answer, type).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'body' } });
      expect(answer.cookies).toEqual({});
    }
  });

  it('signs in as same-origin JSON: with the site’s Origin, or with Sec-Fetch-Site same-origin and no Origin', async () => {
    expect(await post({ origin: ORIGIN, 'content-type': 'application/json; charset=utf-8' })).toMatchObject({ status: 200, json: { ok: true } });
    for (const headers of [{ 'sec-fetch-site': 'same-origin' }, { 'sec-fetch-site': 'same-origin', origin: 'null' }] as Record<string, string>[]) {
      const answer = await post({ ...json, ...headers });
      expect(answer, JSON.stringify(headers)).toMatchObject({ status: 200, json: { ok: true } });
      expect(answer.cookies!.cb_auth_token).toBeDefined();
    }
  });
});

describe('sessions', () => {
  it('answers 401 without a cookie, after 24 hours, and after logout', async () => {
    expect((await me({})).status).toBe(401);
    const session = await signInAs();
    now += 86_400_000;
    expect(await me(browser(session))).toMatchObject({ status: 401, json: { error: 'unauthorized' } });
    now -= 86_400_000;
    const out = await logout(browser(session));
    expect(out.status).toBe(200);
    expect(out.cookies!.cb_auth_token).toMatchObject({ value: '', maxAge: 0 });
    expect((await me(browser(session))).status).toBe(401);
  });

  it('refuses a token signed with another secret, one with alg none, and a tampered one', async () => {
    const session = await signInAs();
    const good = session.cookies!.cb_auth_token!.value;
    const claims = jwt.decode(good) as Record<string, unknown>;
    const forged = jwt.sign(claims, 'some-other-secret-some-other-secret-123');
    const none = jwt.sign(claims, '', { algorithm: 'none' });
    const [head, , sig] = good.split('.');
    const tampered = `${head}.${Buffer.from(JSON.stringify({ ...claims, sub: testWallets.other.address.toLowerCase() })).toString('base64url')}.${sig}`;
    for (const token of [forged, none, tampered, 'garbage']) {
      expect((await me({ cookie: `cb_auth_token=${token}` })).status).toBe(401);
    }
  });

  it('needs the CSRF header matching this session’s token, and Origin equal to the site, for writes (403)', async () => {
    const session = await signInAs();
    const other = await signInAs(testWallets.other);
    const { 'x-csrf-token': _, ...noHeader } = browser(session);
    expect(await logout(noHeader)).toMatchObject({ status: 403, json: { error: 'forbidden' } });
    expect((await logout(browser(session, { origin: 'https://evil.example' }))).status).toBe(403);
    const { origin: __, ...noOrigin } = browser(session);
    expect((await logout(noOrigin)).status).toBe(403);
    // A browser that sends no Origin (or `null`) says where the request comes from in Sec-Fetch-Site: only same-origin passes.
    for (const site of ['cross-site', 'same-site', 'none']) {
      expect((await logout({ ...noOrigin, 'sec-fetch-site': site })).status, site).toBe(403);
      expect((await logout({ ...noOrigin, origin: 'null', 'sec-fetch-site': site })).status, site).toBe(403);
    }
    expect((await logout(browser(session, { origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' }))).status).toBe(403);
    const { 'x-csrf-token': ___, ...sameSiteNoToken } = { ...noOrigin, 'sec-fetch-site': 'same-origin' };
    expect((await logout(sameSiteNoToken)).status).toBe(403);
    const otherToken = other.cookies!.cb_csrf_token!.value;
    const swapped = { ...browser(session), cookie: `cb_auth_token=${session.cookies!.cb_auth_token!.value}; cb_csrf_token=${otherToken}`, 'x-csrf-token': otherToken };
    expect((await logout(swapped)).status).toBe(403);
    expect((await logout(browser(session))).status).toBe(200);
  });

  it('takes a write from this site’s own page whose browser sends no Origin, or `null`, by Sec-Fetch-Site: same-origin', async () => {
    for (const origin of [undefined, 'null']) {
      const session = await signInAs();
      const { origin: _, ...headers } = browser(session);
      expect((await logout({ ...headers, ...(origin && { origin }), 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    }
  });
});
