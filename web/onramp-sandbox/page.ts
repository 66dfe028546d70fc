/**
 * The sandbox on-ramp's checkout page: the stand-in for a card provider's hosted checkout. A plain
 * form (no script): the tester picks an outcome and sends it; the answer is a redirect back to the
 * receipt's page (or its `redirect_url` after a success).
 */
import { sandboxCheckout, sandboxFinish, type SandboxCheckoutView, type SandboxDeps } from '../../shared/app/onramp-sandbox';
import { escapeHtml } from '../../shared/domain/html';
import { paymentUrlFor } from '../../shared/domain/receipt';
import { Reply } from '../../shared/http/function';
import { routes } from '../../shared/http/routes';
import { portalAssets } from '../portal/assets';
import { assetUrl } from '../portal/page';
import { formatUsd } from '../portal/format';
import { htmlDocument } from '../portal/render';

const sessionPath = (sessionId: string) => routes.onrampSandboxPage.path.replace('{session}', encodeURIComponent(sessionId));

/** The page's markup. Pure. */
export const renderSandboxCheckout = (view: SandboxCheckoutView, input: { style: string; paymentUrl: string }): string => {
  const outcomes = view.outcomes
    .map(
      (outcome, index) =>
        `<label class="token"><input type="radio" name="outcome" value="${escapeHtml(outcome.value)}"${index === 0 ? ' checked' : ''}><span class="outcome"><span class="token-symbol">${escapeHtml(
          outcome.label,
        )}</span><span class="outcome-code">${escapeHtml(outcome.portalCode ?? 'the USDC is sent to the split')}</span></span></label>`,
    )
    .join('\n');
  const form = view.closed
    ? `<section class="card state state-warning"><h2>This checkout is closed</h2><p>${escapeHtml(view.closed)}.</p></section>`
    : `<form class="card pay-form" method="post" action="${escapeHtml(sessionPath(view.sessionId))}">
<fieldset class="tokens"><legend>Outcome of the card payment</legend>
${outcomes}
</fieldset>
<button type="submit" class="button button-primary">Pay ${escapeHtml(formatUsd(view.chargeUsd))}</button>
</form>`;
  const body = `<header class="shop"><h1 class="shop-name">Sandbox card checkout</h1></header>
<main class="sheet">
<section class="card" aria-labelledby="order-title">
<h2 id="order-title">${escapeHtml(view.shopName)}</h2>
<p class="note">A test provider: no card is charged. Success sends ${escapeHtml(view.usdc)} test USDC to the shop's split <span class="mono">${escapeHtml(view.destination)}</span> on chain ${view.chainId}; every other outcome is the provider's refusal with its code.</p>
<p class="quote-amount"><span class="quote-label">Card charge</span> <strong>${escapeHtml(formatUsd(view.chargeUsd))}</strong></p>
<p class="quote-amount"><span class="quote-label">Delivered</span> <strong>${escapeHtml(view.usdc)} USDC</strong></p>
</section>
${form}
<p class="footnote"><a href="${escapeHtml(input.paymentUrl)}">Back to the payment page</a> · receipt ${escapeHtml(view.receiptId)} · session <span class="mono">${escapeHtml(view.sessionId)}</span></p>
</main>`;
  return htmlDocument({ title: `Sandbox checkout · ${view.shopName}`, style: input.style }, ' id="sandbox"', body);
};

export const sandboxPage = async (deps: SandboxDeps, sessionId: string): Promise<string> => {
  const { manifest } = await portalAssets();
  const view = await sandboxCheckout(deps, sessionId);
  return renderSandboxCheckout(view, { style: assetUrl(manifest.style), paymentUrl: paymentUrlFor(deps.settings.baseUrl, view.receiptId) });
};

/** The form's answer: 303 to where the buyer goes next. */
export const sandboxFormPost = async (deps: SandboxDeps, sessionId: string, outcome: string): Promise<Reply<string>> => {
  const next = await sandboxFinish(deps, sessionId, outcome);
  return new Reply(303, '', [], { location: next });
};
