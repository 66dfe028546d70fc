import { expect } from 'vitest';
import type { Wallet } from 'ethers';
import { invoke, type Answer } from './http';
import { signedSignIn, testWallets } from './siwe';

export const SITE_ORIGIN = 'http://localhost:7071';

export const newNonce = async () => (await invoke('auth-nonce', { path: '/api/auth/nonce' })).json.nonce as string;

/** A sign-in as the console's page posts it: JSON, from the site's own origin. */
export const login = (body: { message: string; signature: string }) =>
  invoke('auth-login', { method: 'POST', path: '/api/auth/login', headers: { origin: SITE_ORIGIN, 'content-type': 'application/json' }, body });

export interface SignedInBrowser {
  answer: Answer;
  /** Headers a browser on the configured site sends with this session's cookies (and its CSRF header). */
  headers(extra?: Record<string, string>): Record<string, string>;
}

/** Signs `wallet` in through the real endpoints; `at` is the time the wallet stamps in its message. */
export const signInAs = async (wallet: Wallet = testWallets.merchant, at = Date.now()): Promise<SignedInBrowser> => {
  const answer = await login(await signedSignIn(wallet, { nonce: await newNonce(), issuedAt: new Date(at) }));
  expect(answer.status).toBe(200);
  const token = answer.cookies!.cb_auth_token!.value;
  const csrf = answer.cookies!.cb_csrf_token!.value;
  return {
    answer,
    headers: (extra = {}) => ({ cookie: `cb_auth_token=${token}; cb_csrf_token=${csrf}`, origin: SITE_ORIGIN, 'x-csrf-token': csrf, ...extra }),
  };
};
