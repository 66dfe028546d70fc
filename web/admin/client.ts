/**
 * The console's script, one bundle for every page (content-hashed, served from this origin; the
 * pages carry no inline script). The server renders each page whole; this adds what needs the
 * browser: signing in and out with the wallet, the forms' calls to the JSON API (session cookie and
 * CSRF token) with errors next to their fields, and wallet transactions. Each page's part lives in
 * client/<page>.ts.
 */
import { enhanceApiKeys } from './client/api-keys';
import { enhanceInventory } from './client/inventory';
import { api, byId, busy, say, showFlash } from './client/kit';
import { enhanceOverview } from './client/overview';
import { enhanceReceipts } from './client/receipts';
import { enhanceSettings } from './client/settings';
import { enhanceSignIn } from './client/signin';
import { enhanceSplit } from './client/split';
import { enhanceTerminal } from './client/terminal';
import { enhanceWebhooks } from './client/webhooks';

const pages: Record<string, () => void | Promise<void>> = {
  'sign-in': enhanceSignIn,
  overview: enhanceOverview,
  split: enhanceSplit,
  inventory: enhanceInventory,
  settings: enhanceSettings,
  'api-keys': enhanceApiKeys,
  receipts: enhanceReceipts,
  terminal: enhanceTerminal,
  webhooks: enhanceWebhooks,
};

const signOut = async (button: HTMLButtonElement) => {
  const done = busy(button, 'Signing out…');
  const answer = await api('POST', document.body.dataset.logoutUrl ?? '');
  // A session that already ended is as good as signed out.
  if (answer.ok || answer.status === 401) {
    location.assign('/console');
    return;
  }
  done();
  say(`Sign-out failed: ${answer.json.message}`);
};

const start = () => {
  showFlash();
  const signOutButton = byId<HTMLButtonElement>('sign-out');
  signOutButton?.addEventListener('click', () => void signOut(signOutButton));
  // On a phone the navigation scrolls sideways: keep the current page in view.
  document.querySelector('.nav [aria-current="page"]')?.scrollIntoView({ block: 'nearest', inline: 'center' });
  void pages[document.body.dataset.page ?? '']?.();
};

start();
