/**
 * Shop settings: how the payment page looks (with a live preview of its header), tax defaults from
 * the tax catalog, the processing fee (with a worked example of what a buyer pays), the directory
 * listing, the default webhook URL with the webhook signing secret, and the reserve's target ratios.
 * Each section is a form of its own that replaces its groups of the shop configuration
 * (`POST /api/shop/config`); the signing secret is made there or rotated by its own button, and shown
 * once, as an API key is.
 */
import { loadMerchant } from '../../../shared/app/merchants';
import { currentPricing } from '../../../shared/app/pricing';
import { getTaxCatalog } from '../../../shared/app/site-config';
import { industryPacks, type ShopConfig } from '../../../shared/domain/shop';
import { WEBHOOK_SECRET_OVERLAP_MS, toWebhookSigningView, type WebhookSigning } from '../../../shared/domain/webhook-secret';
import { splitRecipients } from '../../../shared/domain/split';
import { routes } from '../../../shared/http/routes';
import { EXAMPLE_ITEMS_CENTS, feeExampleTable, percent } from '../fees';
import { attrs, checkbox, errorSlot, esc, field, fieldId, formStatus, notice, panel, select, usd, utcTime, type AdminPage, type Html, type PageContext } from '../kit';

const endpoint = routes.shopConfigUpdate.path;

const sectionForm = (id: string, body: Html, submit: string): Html => `<form id="${id}" class="settings-form" novalidate data-endpoint="${esc(endpoint)}">
${body}
<div class="actions"><button class="button button-primary" type="submit">${esc(submit)}</button></div>
${formStatus(id)}
</form>`;

const textarea = (name: string, label: string, value: string, maxlength: number): Html => {
  const id = fieldId(name);
  return `<div class="field span-all">
<label for="${id}">${esc(label)}</label>
<textarea${attrs({ id, name, rows: 2, maxlength, 'aria-describedby': `${id}-error` })}>${esc(value)}</textarea>
${errorSlot(name)}
</div>`;
};

const colorField = (name: string, label: string, value: string): Html => field({ name, label, value, type: 'color' });

const brandingSection = (config: ShopConfig, brandName: string): Html => {
  const { branding, layout } = config;
  const preview = `<figure class="preview-figure">
<figcaption id="preview-caption">Preview: the top of your payment page</figcaption>
<div class="preview" id="brand-preview" aria-describedby="preview-caption" data-default-name="${esc(brandName)}">
<img class="preview-cover" id="preview-cover" alt=""${branding.coverPhotoUrl ? ` src="${esc(branding.coverPhotoUrl)}"` : ' hidden'}>
<div class="preview-header">
<img class="preview-logo" id="preview-logo" alt="" width="44" height="44"${branding.brandLogoUrl && layout.showLogo ? ` src="${esc(branding.brandLogoUrl)}"` : ' hidden'}>
<p class="preview-name" id="preview-name">${esc(branding.name || brandName)}</p>
</div>
<div class="preview-body"><span class="preview-pay">Pay 26.13 USDC</span><span class="preview-badge">Awaiting payment</span></div>
</div>
</figure>`;
  return panel(
    'branding',
    'Branding',
    `<div class="split-view">
${preview}
${sectionForm(
  'branding-form',
  `<div class="fields fields-2">
${field({ name: 'branding.name', label: 'Shop name', value: branding.name, maxlength: 80, hint: 'Shown at the top of your payment page and in the directory.' })}
${field({ name: 'branding.brandLogoUrl', label: 'Logo URL', value: branding.brandLogoUrl, type: 'url', inputmode: 'url', placeholder: 'https://…' })}
${textarea('branding.description', 'Description', branding.description, 500)}
${field({ name: 'branding.coverPhotoUrl', label: 'Cover photo URL', value: branding.coverPhotoUrl, type: 'url', inputmode: 'url', placeholder: 'https://…' })}
</div>
<fieldset class="colors"><legend>Colours</legend>
<div class="fields fields-3">
${colorField('branding.colors.primary', 'Main colour (pay button)', branding.colors.primary)}
${colorField('branding.colors.accent', 'Accent', branding.colors.accent)}
${colorField('branding.colors.background', 'Page background', branding.colors.background)}
</div>
</fieldset>
<fieldset><legend>Layout</legend>
<div class="fields">
${select({ name: 'layout.template', label: 'Template', value: layout.template, options: [{ value: 'classic', label: 'Classic' }, { value: 'compact', label: 'Compact' }, { value: 'minimal', label: 'Minimal' }] })}
${checkbox({ name: 'layout.showLogo', label: 'Show the logo', checked: layout.showLogo })}
${checkbox({ name: 'layout.showPoweredBy', label: 'Show “powered by”', checked: layout.showPoweredBy })}
</div>
</fieldset>`,
  'Save branding',
)}
</div>`,
  );
};

const jurisdictionRow = (index: number, jurisdiction: { code: string; name: string; rate: number }): Html => {
  const base = `taxDefaults.jurisdictions.${index}`;
  return `<tr data-jurisdiction="${esc(jurisdiction.code)}">
<th scope="row" data-label="Code"><span class="mono">${esc(jurisdiction.code)}</span><input type="hidden" name="${base}.code" value="${esc(jurisdiction.code)}"></th>
<td data-label="Name"><label class="visually-hidden" for="${fieldId(`${base}.name`)}">Name of ${esc(jurisdiction.code)}</label><input id="${fieldId(`${base}.name`)}" name="${base}.name" value="${esc(jurisdiction.name)}" maxlength="80">${errorSlot(`${base}.name`)}</td>
<td data-label="Rate %"><label class="visually-hidden" for="${fieldId(`${base}.rate`)}">Rate of ${esc(jurisdiction.code)} in percent</label><input id="${fieldId(`${base}.rate`)}" name="${base}.rate" value="${esc(percent(jurisdiction.rate))}" inputmode="decimal">${errorSlot(`${base}.rate`)}</td>
<td class="row-actions"><button class="button button-small button-danger" type="button" data-remove-jurisdiction aria-label="Remove ${esc(jurisdiction.code)}">Remove</button></td>
</tr>`;
};

const taxSection = (config: ShopConfig): Html => {
  const catalog = getTaxCatalog();
  const own = config.taxDefaults.jurisdictions;
  const defaultOptions = [
    { value: '', label: 'None: orders name their jurisdiction' },
    ...own.map((j) => ({ value: j.code, label: `${j.code} · ${j.name} (${percent(j.rate)} %, yours)` })),
    ...catalog.jurisdictions.filter((j) => !own.some((mine) => mine.code === j.code)).map((j) => ({ value: j.code, label: `${j.code} · ${j.name} (${percent(j.rate)} %)` })),
  ];
  return panel(
    'tax',
    'Tax',
    sectionForm(
      'tax-form',
      `<p>Orders are taxed at the rate of the jurisdiction they name, or at your default. Your own rates below replace the catalog’s.</p>
<details class="sources"><summary>The catalog: rates as of ${esc(catalog.asOf)}, and its sources</summary>
<ul>${catalog.sources.map((source) => `<li>${esc(source)}</li>`).join('')}</ul>
</details>
<div class="table-wrap"><table class="table-cards" id="tax-table">
<caption class="visually-hidden">Your tax rates</caption>
<thead><tr><th scope="col">Code</th><th scope="col">Name</th><th scope="col">Rate %</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody id="tax-rows">
${own.map((jurisdiction, index) => jurisdictionRow(index, jurisdiction)).join('\n')}
</tbody>
</table></div>
<p class="empty" id="tax-empty"${own.length > 0 ? ' hidden' : ''}>No rates of your own: the catalog’s apply.</p>
${errorSlot('taxDefaults.jurisdictions')}
<div class="add-row">
<div class="field">
<label for="tax-catalog">Add a rate from the catalog</label>
<select id="tax-catalog">
${catalog.jurisdictions.map((j) => `<option${attrs({ value: j.code, 'data-name': j.name, 'data-rate': percent(j.rate) })}>${esc(`${j.code} · ${j.name} (${percent(j.rate)} %)`)}</option>`).join('\n')}
</select>
</div>
<button class="button" type="button" id="tax-add">Add rate</button>
</div>
${select({ name: 'taxDefaults.defaultJurisdictionCode', label: 'Default jurisdiction', value: config.taxDefaults.defaultJurisdictionCode ?? '', options: defaultOptions, hint: 'Used for orders that name none.' })}`,
      'Save tax',
    ),
  );
};

/** The rate of the default jurisdiction (the shop's own first), for the fee's worked example. */
const defaultTax = (config: ShopConfig): { code: string; rate: number } | null => {
  const code = config.taxDefaults.defaultJurisdictionCode;
  if (!code) return null;
  const rate = config.taxDefaults.jurisdictions.find((j) => j.code === code)?.rate ?? getTaxCatalog().jurisdictions.find((j) => j.code === code)?.rate;
  return rate === undefined ? null : { code, rate };
};

const feeSection = (config: ShopConfig, feeBps: number): Html => {
  const tax = defaultTax(config);
  return panel(
    'fee',
    'Processing fee',
    sectionForm(
      'fee-form',
      `<div class="fields fields-2">
${field({ name: 'processingFeePct', label: 'Processing fee (%)', value: config.processingFeePct, inputmode: 'decimal', hint: 'Added to every order’s total, 0 to 10 % with at most 2 decimals. It also covers the platform’s share, so you receive the order plus this percentage.' })}
</div>
<div class="worked-example" id="fee-example"${attrs({ 'data-fee-bps': feeBps, 'data-tax-rate': tax?.rate ?? 0, 'data-tax-code': tax?.code ?? '' })} aria-live="polite">
<p><strong>Example:</strong> an order of ${esc(usd(EXAMPLE_ITEMS_CENTS / 100))}</p>
<div id="fee-example-table">${feeExampleTable({ processingFeePct: config.processingFeePct, feeBps, tax })}</div>
</div>`,
      'Save fee',
    ),
  );
};

const listText = (values: readonly string[]) => values.join(', ');

const directorySection = (config: ShopConfig, hasSplit: boolean): Html => {
  const { directory } = config;
  return panel(
    'directory',
    'Directory listing',
    sectionForm(
      'directory-form',
      `${hasSplit ? '' : notice('info', '<p>Listed shops appear in the directory once their split is deployed.</p>')}
<div class="fields fields-2">
${checkbox({ name: 'directory.listed', label: 'List my shop in the directory', checked: directory.listed, hint: 'Buyers and agents find listed shops (GET /api/directory/shops).' })}
${field({ name: 'directory.slug', label: 'Shop address', value: directory.slug, maxlength: 32, hint: 'Lower-case letters, digits and single hyphens: the name agents order from.' })}
${field({ name: 'directory.categories', label: 'Categories', value: listText(directory.categories), hint: 'Up to 3, separated by commas.' })}
${field({ name: 'directory.keywords', label: 'Keywords', value: listText(directory.keywords), hint: 'Up to 5, separated by commas.' })}
${select({ name: 'directory.industryPack', label: 'Industry', value: directory.industryPack, options: industryPacks.map((pack) => ({ value: pack, label: pack[0]!.toUpperCase() + pack.slice(1) })) })}
</div>`,
      'Save listing',
    ),
  );
};

const overlapHours = WEBHOOK_SECRET_OVERLAP_MS / 3_600_000;

/** The secret shown once, when it is made: saved by the merchant, then gone from the page. */
const secretReveal: Html = `<section id="secret-reveal" class="key-reveal" aria-labelledby="secret-reveal-title" hidden tabindex="-1">
<h3 id="secret-reveal-title">Your webhook signing secret</h3>
${notice('warning', '<p><strong>Copy it now: it is not shown again.</strong> Your receiver checks signatures with it; anyone holding it can forge your webhooks.</p>')}
<div class="field">
<label for="secret-value">Signing secret</label>
<div class="copy-row">
<input id="secret-value" class="mono" type="text" readonly autocomplete="off" spellcheck="false">
<button class="button" type="button" id="secret-copy">Copy</button>
</div>
<p class="form-status" id="secret-copy-status" role="status" aria-live="polite"></p>
</div>
<div class="actions"><button class="button button-primary" type="button" id="secret-done">I have saved it</button></div>
</section>`;

const signingSecretBlock = (signing: WebhookSigning | undefined, now: number): Html => {
  const view = signing ? toWebhookSigningView(signing, now) : null;
  const facts = view
    ? `<div id="signing-secret-facts"><dl class="facts">
<dt>Current secret</dt><dd><span class="mono">${esc(view.prefix)}…</span>, made ${utcTime(view.createdAt)}</dd>
${view.previous ? `<dt>Previous secret</dt><dd><span class="mono">${esc(view.previous.prefix)}…</span> still signs beside it until ${utcTime(view.previous.until)}</dd>` : ''}
</dl></div>`
    : notice('info', '<p>No signing secret yet: one is made when you save a webhook URL, or make one now. Until then, webhooks of receipts made here and by agents cannot be sent.</p>', { id: 'signing-secret-none' });
  return `<div class="signing-secret" id="signing-secret">
<h3>Signing secret</h3>
<p>Webhooks of receipts no API key created (sales at the terminal, agents’ orders) are signed with this secret; a receipt your backend creates with a key is signed with that key. It is shown once, when it is made.</p>
${facts}
<form id="secret-rotate-form" novalidate${attrs({ 'data-url': routes.consoleWebhookSecretRotate.path, 'data-confirm': view ? 'true' : undefined })}>
<div class="actions"><button class="button" type="submit">${view ? 'Rotate the secret' : 'Make a signing secret'}</button></div>
${view ? `<p class="hint">A rotation makes a new secret; for ${overlapHours} hours every delivery is signed with both, so your receiver can switch without missing an event.</p>` : ''}
${formStatus('secret-rotate-form')}
</form>
${secretReveal}
</div>
<dialog id="rotate-dialog" aria-labelledby="rotate-title" aria-describedby="rotate-text">
<h2 id="rotate-title">Rotate the signing secret?</h2>
<p id="rotate-text">A new secret is made and shown once. For ${overlapHours} hours every delivery is signed with both the old and the new one; after that, only the new one signs.</p>
<form method="dialog" class="actions">
<button class="button button-primary" type="submit" value="rotate">Rotate</button>
<button class="button" type="submit" value="cancel" autofocus>Cancel</button>
</form>
</dialog>`;
};

const webhookSection = (config: ShopConfig, signing: WebhookSigning | undefined, development: boolean, now: number): Html =>
  panel(
    'webhook',
    'Webhook',
    `${sectionForm(
      'webhook-form',
      `<div class="fields">
${field({ name: 'webhookUrl', label: 'Default webhook URL', value: config.webhookUrl, type: 'url', inputmode: 'url', placeholder: 'https://…', hint: `Receipt status changes are sent here, unless a receipt names its own URL. ${development ? 'Locally, http and local addresses are allowed.' : 'It must be https on a public address.'} Leave empty for none.` })}
</div>`,
      'Save webhook',
    )}
${signingSecretBlock(signing, now)}`,
  );

const reserveSection = (config: ShopConfig, symbols: readonly string[]): Html =>
  panel(
    'reserve',
    'Reserve',
    sectionForm(
      'reserve-form',
      `<p>The share of each token you want to hold; the payment page offers first the token that moves your holdings toward these targets. Together they make 100 %. Leave all empty for no targets.</p>
<div class="fields fields-3">
${symbols.map((symbol) => field({ name: `reserveRatios.${symbol}`, label: `${symbol} (%)`, value: config.reserveRatios?.[symbol] === undefined ? '' : percent(config.reserveRatios[symbol]!), inputmode: 'decimal' })).join('\n')}
</div>
${errorSlot('reserveRatios')}`,
      'Save reserve',
    ),
  );

const render = async ({ deps, wallet, now }: PageContext): Promise<Html> => {
  const [merchant, pricing] = await Promise.all([loadMerchant(deps, wallet), currentPricing(deps, deps.settings.brandKey)]);
  const config = merchant.shop;
  // The fee's example uses the split's shares, or those a split deployed now would have.
  const feeBps = merchant.split
    ? merchant.split.platformFeeBps + merchant.split.partnerFeeBps
    : splitRecipients({ merchant: wallet, platformWallet: deps.settings.platformWallet ?? wallet, ...pricing })
        .filter((recipient) => recipient.role !== 'merchant')
        .reduce((sum, recipient) => sum + recipient.bps, 0);
  const symbols = deps.settings.tokens.map((token) => token.symbol);
  return [
    `<nav class="jump" aria-label="Sections"><ul>${[
      ['branding', 'Branding'],
      ['tax', 'Tax'],
      ['fee', 'Fee'],
      ['directory', 'Directory'],
      ['webhook', 'Webhook'],
      ['reserve', 'Reserve'],
    ]
      .map(([id, label]) => `<li><a href="#${id}">${label}</a></li>`)
      .join('')}</ul></nav>`,
    brandingSection(config, deps.settings.brandName),
    taxSection(config),
    feeSection(config, feeBps),
    directorySection(config, merchant.split !== null),
    webhookSection(config, merchant.webhookSigning, deps.settings.development, now),
    reserveSection(config, symbols.length > 0 ? symbols : ['USDC', 'USDT', 'ETH']),
  ].join('\n');
};

export const settingsPage: AdminPage = {
  slug: 'settings',
  label: 'Settings',
  intro: 'How your shop looks to buyers, its tax and fee, the directory, webhooks and your reserve.',
  render,
};
