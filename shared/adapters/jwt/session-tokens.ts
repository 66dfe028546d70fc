import { createHmac } from 'node:crypto';
import type jsonwebtoken from 'jsonwebtoken';
import type { SessionClaims } from '../../domain/session';
import type { SessionTokens } from '../../ports/auth';

/** The library, loaded with the first token rather than with the app: loading it compiles semver's patterns, which a cold start need not pay for. */
let library: typeof jsonwebtoken | undefined;
const jwt = (): typeof jsonwebtoken => (library ??= require('jsonwebtoken'));

/** HS256 only, both ways: a token with any other `alg` (none included) is refused. */
export const hs256SessionTokens = (secret: string, clock: { now(): number }): SessionTokens => ({
  issue: (claims) => jwt().sign({ sub: claims.sub, sid: claims.sid, exp: Math.floor(claims.exp / 1000) }, secret, { algorithm: 'HS256', noTimestamp: false }),
  verify: (token) => {
    try {
      const payload = jwt().verify(token, secret, { algorithms: ['HS256'], clockTimestamp: Math.floor(clock.now() / 1000) });
      if (typeof payload !== 'object' || typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || typeof payload.exp !== 'number') {
        return undefined;
      }
      return { sub: payload.sub, sid: payload.sid, exp: payload.exp * 1000 };
    } catch {
      return undefined;
    }
  },
  // Domain-separated from the token signatures: a MAC never doubles as a token signature.
  mac: (text) => createHmac('sha256', secret).update(`mac:${text}`, 'utf8').digest('hex'),
});
