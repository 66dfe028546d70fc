/**
 * Terminal: the point of sale. An amount becomes a receipt (priced as an order is: the sale, tax,
 * processing fee); the screen shows its payment link as a QR code for the buyer's phone and turns to
 * "Paid" when the payment is seen on chain.
 */
import { loadMerchant } from '../../../shared/app/merchants';
import { routes } from '../../../shared/http/routes';
import { adminPath, attrs, esc, field, formStatus, notice, panel, type AdminPage, type Html } from '../kit';

const saleScreen: Html = `<section id="sale" class="panel sale" aria-labelledby="sale-title" hidden tabindex="-1">
<h2 id="sale-title">Scan to pay</h2>
<div class="sale-body">
<figure class="sale-qr">
<img id="sale-qr" width="280" height="280" alt="">
<figcaption class="hint">The buyer scans it with a phone camera or wallet and pays on the payment page.</figcaption>
</figure>
<div class="sale-side">
<p class="sale-state" id="sale-state" role="status" aria-live="polite"><span class="badge" id="sale-status" data-status="generated">Waiting</span> <span id="sale-note">Waiting for the payment…</span></p>
<div id="sale-paid" class="sale-paid" hidden tabindex="-1">
<p class="sale-paid-mark" aria-hidden="true">✓</p>
<p class="sale-paid-text" id="sale-paid-text">Paid</p>
</div>
<dl class="facts">
<dt>Receipt</dt><dd><a id="sale-receipt" class="mono" href="#"></a></dd>
<dt>Payment link</dt><dd><a id="sale-link" href="#" rel="noreferrer noopener" target="_blank"></a></dd>
</dl>
<div class="actions"><button class="button button-primary" type="button" id="sale-new">New sale</button></div>
</div>
</div>
</section>`;

export const terminalPage: AdminPage = {
  slug: 'terminal',
  label: 'Terminal',
  intro: 'Take a payment in person: enter the amount, show the QR code, and see it paid.',
  render: async ({ deps, wallet }) => {
    const merchant = await loadMerchant(deps, wallet);
    const signing = merchant.webhookSigning?.current;
    const ready = Boolean(merchant.split);
    const form = `<form id="terminal-form" novalidate${attrs({ 'data-url': routes.consoleReceiptsTerminal.path, 'data-poll': routes.consoleReceiptsGet.path, 'data-receipts': adminPath('receipts') })}>
<fieldset${ready ? '' : ' disabled'}>
<legend>New sale</legend>
<div class="fields fields-2">
${field({ name: 'amountUsd', label: 'Amount (USD)', required: true, inputmode: 'decimal', placeholder: '12.50', hint: 'Before tax and the processing fee, which are added as for an order.' })}
${field({ name: 'label', label: 'What it is for', placeholder: 'Sale', maxlength: 200, hint: 'Shown on the buyer’s receipt.' })}
</div>
<div class="actions"><button class="button button-primary" type="submit">Show the QR code</button></div>
</fieldset>
${formStatus('terminal-form')}
</form>`;
    return `${ready ? '' : notice('warning', `<p><strong>Deploy your split first.</strong> Payments go to your split contract. <a href="${adminPath('split')}">Go to Split</a>.</p>`, { alert: true })}
${panel(
  'terminal',
  'Amount',
  `${form}
${signing ? `<p class="hint">Webhooks of these receipts are signed with your webhook signing secret, <span class="mono">${esc(signing.prefix)}…</span>.</p>` : `<p class="hint">These receipts send no webhooks until you <a href="${adminPath('settings')}#webhook">make a webhook signing secret</a> (it signs them).</p>`}`,
)}
${saleScreen}`;
  },
};
