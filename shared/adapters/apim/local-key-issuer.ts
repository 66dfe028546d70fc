import type { KeyIssuer } from '../../ports/key-issuer';
import type { Ids } from '../../ports/runtime';

/**
 * The local stack's issuer: there is no gateway to register the key with, so the key is simply made
 * here. The local host checks keys against the subscription repository, which stores the record and
 * the key's hash; nothing is kept in this issuer, so revoking has nothing to undo.
 */
export const localKeyIssuer = (ids: Ids): KeyIssuer => ({
  issue: async () => ({ apiKey: ids.apiKey() }),
  revoke: async () => {},
});
