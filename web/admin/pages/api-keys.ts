/**
 * API keys: create a key on the wallet's plan with the scopes the merchant ticks (the key shown once,
 * with a copy button), revoke a key, and roll a revoked key's receipts to an active key so their
 * webhooks are signed by a key the merchant still holds.
 */
import { MAX_ACTIVE_KEYS, listMerchantKeys } from '../../../shared/app/api-keys';
import { loadMerchant } from '../../../shared/app/merchants';
import { currentPlanOf } from '../../../shared/domain/merchant';
import { scopes, type Scope } from '../../../shared/domain/subscription';
import { routes } from '../../../shared/http/routes';
import { attrs, errorSlot, esc, formStatus, notice, panel, utcTime, type AdminPage, type Html } from '../kit';

/** What each scope lets a key do, in the merchant's words. */
export const scopeHints: Record<Scope, string> = {
  'inventory:read': 'read your inventory',
  'inventory:write': 'add, change and delete items',
  'orders:create': 'price orders from your inventory into receipts',
  'receipts:read': 'read receipts, their status and webhook deliveries',
  'receipts:write': 'create receipts, report statuses, the terminal, test webhooks',
  'shop:read': 'read your shop configuration',
  'split:read': 'read your split and its transactions',
};

type KeyView = Awaited<ReturnType<typeof listMerchantKeys>>['keys'][number];

const keyName = (key: KeyView) => `<span class="mono">${esc(key.prefix)}…</span>`;

const statusBadge = (key: KeyView) => (key.status === 'active' ? '<span class="badge badge-success">Active</span>' : '<span class="badge badge-danger">Revoked</span>');

const createForm = (plan: string, quota: number | undefined, full: boolean): Html => `<form id="key-create" novalidate${attrs({ 'data-url': routes.keysCreate.path })}>
<p>Keys come on your plan: <strong>${esc(plan)}</strong>${quota ? ` (${esc(quota.toLocaleString('en-US'))} requests a minute per key)` : ''}. A key is shown once, when it is made: keep it in your backend’s secrets. It also signs the webhooks of the receipts it creates.</p>
<fieldset>
<legend>What the key may do</legend>
<div class="scope-grid">
${scopes
  .map(
    (scope) => `<div class="field field-check">
<input${attrs({ id: `scope-${scope.replace(':', '-')}`, type: 'checkbox', name: 'scopes', value: scope, checked: scope === 'orders:create' || scope === 'receipts:read', 'aria-describedby': `scope-${scope.replace(':', '-')}-hint` })}>
<label for="scope-${esc(scope.replace(':', '-'))}"><span class="mono">${esc(scope)}</span></label>
<p class="hint" id="scope-${esc(scope.replace(':', '-'))}-hint">${esc(scopeHints[scope])}</p>
</div>`,
  )
  .join('\n')}
</div>
${errorSlot('scopes')}
</fieldset>
<div class="actions">
<button class="button button-primary" type="submit"${full ? ' disabled' : ''}>Create key</button>
<button class="button" type="button" id="scopes-all">Tick every scope</button>
</div>
${formStatus('key-create')}
</form>
<section id="key-reveal" class="key-reveal" aria-labelledby="key-reveal-title" hidden tabindex="-1">
<h3 id="key-reveal-title">Your new key</h3>
${notice('warning', '<p><strong>Copy it now: it is not shown again.</strong> Anyone holding it can use your API.</p>')}
<div class="field">
<label for="key-value">API key</label>
<div class="copy-row">
<input id="key-value" class="mono" type="text" readonly autocomplete="off" spellcheck="false">
<button class="button" type="button" id="key-copy">Copy</button>
</div>
<p class="form-status" id="key-copy-status" role="status" aria-live="polite"></p>
</div>
<div class="actions"><button class="button button-primary" type="button" id="key-done">I have saved it</button></div>
</section>`;

const rollForm = (key: KeyView, active: KeyView[]): Html => {
  if (active.length === 0) return `<p class="hint">Create an active key to roll this one’s receipts to.</p>`;
  const id = `roll-${key.id}`;
  return `<form class="roll-form" id="${esc(id)}" novalidate${attrs({ 'data-url': routes.keysRoll.path.replace('{id}', encodeURIComponent(key.id)), 'data-key': key.id })}>
<div class="field">
<label for="${esc(id)}-to">Sign its receipts with</label>
<select id="${esc(id)}-to" name="toKeyId" aria-describedby="${esc(id)}-to-error">
${active.map((target) => `<option value="${esc(target.id)}">${esc(target.prefix)}… (${esc(target.scopes.length)} scopes)</option>`).join('\n')}
</select>
<p class="field-error" id="${esc(id)}-to-error" data-error-for="toKeyId" hidden></p>
</div>
<div class="actions"><button class="button button-small" type="submit">Roll receipts</button></div>
${formStatus(id)}
</form>`;
};

const keyRows = (keys: KeyView[]): Html => {
  const active = keys.filter((key) => key.status === 'active');
  return keys
    .map(
      (key) => `<tr${attrs({ 'data-key': key.id })}>
<th scope="row">${keyName(key)} <span class="hint mono key-id">${esc(key.id)}</span></th>
<td data-label="Status">${statusBadge(key)}</td>
<td data-label="Scopes"><ul class="scope-list">${key.scopes.map((scope) => `<li class="mono">${esc(scope)}</li>`).join('')}</ul></td>
<td data-label="Plan">${esc(key.plan)}</td>
<td data-label="Created">${utcTime(key.createdAt)}</td>
<td data-label="Last used">${key.lastUsedAt ? utcTime(key.lastUsedAt) : '<span class="empty">never</span>'}</td>
<td>${
        key.status === 'active'
          ? `<div class="row-actions"><button class="button button-danger button-small" type="button"${attrs({ 'data-revoke': key.id, 'data-url': routes.keysRevoke.path.replace('{id}', encodeURIComponent(key.id)), 'aria-label': `Revoke key ${key.prefix}…` })}>Revoke</button></div>`
          : `${key.revokedAt ? `<p class="hint">Revoked ${utcTime(key.revokedAt)}</p>` : ''}${rollForm(key, active.filter((target) => target.id !== key.id))}`
      }</td>
</tr>`,
    )
    .join('\n');
};

export const apiKeysPage: AdminPage = {
  slug: 'api-keys',
  label: 'API keys',
  intro: 'Create keys for your backend (each shown once), see when they were last used, revoke them, and move a revoked key’s receipts to another key.',
  render: async ({ deps, wallet, now }) => {
    const [{ keys }, merchant] = await Promise.all([listMerchantKeys(deps, wallet), loadMerchant(deps, wallet)]);
    const plan = currentPlanOf(merchant, now);
    const sorted = [...keys].sort((a, b) => Number(a.status === 'revoked') - Number(b.status === 'revoked') || b.createdAt - a.createdAt);
    const activeCount = keys.filter((key) => key.status === 'active').length;
    const full = activeCount >= MAX_ACTIVE_KEYS;
    const table =
      keys.length === 0
        ? '<p class="empty">No keys yet. Create one above for your backend.</p>'
        : `<div class="table-wrap"><table class="keys-table table-cards">
<caption class="visually-hidden">Your API keys, active first</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Scopes</th><th scope="col">Plan</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>
${keyRows(sorted)}
</tbody>
</table></div>`;
    return `${panel(
      'create-key',
      'Create a key',
      `${full ? notice('warning', `<p>You hold ${MAX_ACTIVE_KEYS} active keys, the most a wallet may. Revoke one to create another.</p>`) : ''}${createForm(plan, deps.settings.planQuotas[plan], full)}`,
    )}
${panel(
  'keys',
  `Your keys (${activeCount} active of at most ${MAX_ACTIVE_KEYS})`,
  `<p class="hint">A revoked key still signs the webhooks of the receipts it created, so your receiver keeps verifying them. Roll it to move those receipts that can still change to one of your active keys: their next webhooks are signed with that key.</p>
${table}
${formStatus('keys')}`,
)}
<dialog id="revoke-dialog" aria-labelledby="revoke-title" aria-describedby="revoke-text">
<h2 id="revoke-title">Revoke this key?</h2>
<p id="revoke-text">Requests with it stop working within seconds. The receipts it created keep being signed with it until you roll it.</p>
<form method="dialog" class="actions">
<button class="button button-danger button-solid" type="submit" value="revoke">Revoke key</button>
<button class="button" type="submit" value="cancel" autofocus>Cancel</button>
</form>
</dialog>`;
  },
};
