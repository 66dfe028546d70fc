/**
 * Webhooks: where the shop's status events go, who signs them and how a receiver checks them, and a
 * test event sent now to any URL, signed with the shop's webhook signing secret or a key the
 * merchant picks, with the receiver's answer.
 */
import { listMerchantKeys } from '../../../shared/app/api-keys';
import { loadMerchant } from '../../../shared/app/merchants';
import { WEBHOOK_TIMEOUT_MS } from '../../../shared/domain/webhook';
import { toWebhookSigningView } from '../../../shared/domain/webhook-secret';
import { routes } from '../../../shared/http/routes';
import { adminPath, attrs, esc, field, formStatus, notice, panel, select, utcTime, type AdminPage, type Html } from '../kit';

const outcomeBox: Html = `<section id="webhook-outcome" class="outcome" aria-labelledby="webhook-outcome-title" hidden tabindex="-1">
<h3 id="webhook-outcome-title">Outcome</h3>
<div id="webhook-outcome-notice"></div>
<dl class="facts">
<dt>Receiver answered</dt><dd id="outcome-http"></dd>
<dt>Time</dt><dd id="outcome-time"></dd>
<dt>Delivery id</dt><dd class="mono" id="outcome-delivery"></dd>
<dt>Signed with</dt><dd class="mono" id="outcome-key"></dd>
</dl>
</section>`;

export const webhooksPage: AdminPage = {
  slug: 'webhooks',
  label: 'Webhooks',
  intro: 'Where your receipts’ status events go, and a test event to check your receiver.',
  render: async ({ deps, wallet, now }) => {
    const [merchant, { keys }] = await Promise.all([loadMerchant(deps, wallet), listMerchantKeys(deps, wallet)]);
    const active = keys.filter((key) => key.status === 'active').sort((a, b) => b.createdAt - a.createdAt);
    const target = merchant.shop.webhookUrl;
    const prefix = deps.settings.webhookHeaderPrefix;
    const signing = merchant.webhookSigning ? toWebhookSigningView(merchant.webhookSigning, now) : null;
    const secretName = signing ? `<span class="mono">${esc(signing.prefix)}…</span>` : '';
    const where = panel(
      'webhook-target',
      'Where events go',
      `${
        target
          ? `<p>Every status change of a receipt is sent to <span class="mono">${esc(target)}</span>, unless the receipt names its own <span class="mono">webhook_url</span>.</p>`
          : notice('info', `<p>Your shop has no webhook URL: only receipts that name their own <span class="mono">webhook_url</span> send events. <a href="${adminPath('settings')}">Set one in Settings</a>.</p>`)
      }
<p class="hint">An event of a receipt your backend created with an API key is signed with that key; one of a receipt made here or by an agent, with your webhook signing secret${signing ? ` (${secretName}${signing.previous ? `, and the previous <span class="mono">${esc(signing.previous.prefix)}…</span> beside it until ${utcTime(signing.previous.until)}` : ''})` : ''}. Check <span class="mono">${esc(prefix)}Signature-Timestamped</span> (any of its <span class="mono">v1</span> signatures may match) or <span class="mono">${esc(prefix)}Signature</span> (HMAC-SHA256 of the body), and deduplicate on <span class="mono">${esc(prefix)}Delivery</span>. Your receiver must answer 2xx within ${WEBHOOK_TIMEOUT_MS / 1000} seconds; a failed delivery is tried once more 5 seconds later.</p>
${signing ? '' : notice('warning', `<p>You have no webhook signing secret yet, so webhooks of receipts made here and by agents cannot be sent. <a href="${adminPath('settings')}#webhook">Make one in Settings</a>.</p>`)}`,
    );
    if (active.length === 0 && !signing) {
      return `${where}${panel('webhook-test', 'Send a test event', notice('warning', `<p>Test events are signed with your webhook signing secret or one of your API keys, and you have neither. <a href="${adminPath('settings')}#webhook">Make a signing secret</a> or <a href="${adminPath('api-keys')}">create a key</a>.</p>`))}`;
    }
    const signers = [
      ...(signing ? [{ value: '', label: `Webhook signing secret · ${signing.prefix}…` }] : []),
      ...active.map((key) => ({ value: key.id, label: `API key ${key.prefix}… · ${new Date(key.createdAt).toISOString().slice(0, 10)}` })),
    ];
    const form = `<form id="webhook-test-form" novalidate${attrs({ 'data-url': routes.consoleWebhooksTest.path })}>
<div class="fields">
${field({ name: 'url', label: 'Receiver URL', type: 'url', required: true, value: target ?? '', placeholder: 'https://example.com/webhooks', inputmode: 'url', maxlength: 2048 })}
${select({ name: 'keyId', label: 'Sign with', value: signers[0]!.value, options: signers, hint: 'Your receiver verifies the signature with this secret or key.' })}
</div>
<div class="actions"><button class="button button-primary" type="submit">Send test event</button></div>
${formStatus('webhook-test-form')}
</form>
${outcomeBox}`;
    return `${where}${panel('webhook-test', 'Send a test event', `<p>Sends a signed sample <span class="mono">receipt.status_updated</span> (receipt <span class="mono">R-TEST-EVENT</span>) now, and shows what your receiver answered.</p>${form}`)}`;
  },
};
