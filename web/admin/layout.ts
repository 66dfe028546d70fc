/**
 * The console's frame, rendered on the server: the document head (the content-hashed stylesheet and
 * script, no inline script or style), the top bar with the signed-in wallet and sign-out, the
 * navigation (every page, the current one marked), the page's heading and content; and the two pages
 * without a session: sign-in and not found.
 */
import { ADMIN_ROOT, adminPath, attrs, esc, notice, type AdminPage, type Html } from './kit';
import { documentHead } from '../portal/render';

export interface ConsoleAssets {
  script: string;
  style: string;
}

/** The JSON routes the script calls on every page (paths from the route table). */
export interface ConsoleEndpoints {
  nonce: string;
  login: string;
  logout: string;
}

export interface FrameInput {
  assets: ConsoleAssets;
  endpoints: ConsoleEndpoints;
  brandName: string;
  chainId: number;
}

const document = (input: FrameInput, title: string, bodyAttributes: Record<string, string | undefined>, body: Html): Html => `${documentHead({ title, style: input.assets.style, script: input.assets.script })}
<body${attrs({
  ...bodyAttributes,
  'data-nonce-url': input.endpoints.nonce,
  'data-login-url': input.endpoints.login,
  'data-logout-url': input.endpoints.logout,
  'data-chain-id': input.chainId,
})}>
<a class="skip-link" href="#main">Skip to content</a>
${body}
<div id="live" class="visually-hidden" role="status" aria-live="polite"></div>
</body>
</html>
`;

const brand = (input: FrameInput) =>
  `<a class="brand" href="${ADMIN_ROOT}"><span class="brand-name">${esc(input.brandName)}</span><span class="brand-sub">Merchant console</span></a>`;

const shortWallet = (wallet: string) => `${wallet.slice(0, 6)}…${wallet.slice(-4)}`;

export const navigation = (pages: readonly AdminPage[], current: AdminPage | undefined): Html =>
  `<nav class="nav" aria-label="Console">
<ul>
${pages
  .map((page) => `<li><a${attrs({ href: adminPath(page.slug), 'aria-current': page === current ? 'page' : undefined, 'data-page-link': page.slug || 'overview' })}>${esc(page.label)}</a></li>`)
  .join('\n')}
</ul>
</nav>`;

/** A signed-in page: top bar, navigation, heading and content. */
export const renderConsolePage = (input: FrameInput & { pages: readonly AdminPage[]; page: AdminPage; wallet: string; content: Html }): Html =>
  document(
    input,
    `${input.page.label} · ${input.brandName} console`,
    { 'data-page': input.page.slug || 'overview', 'data-wallet': input.wallet },
    `<header class="topbar">
${brand(input)}
<div class="account">
<span class="account-wallet" title="${esc(input.wallet)}"><span class="visually-hidden">Signed in as </span><span class="mono">${esc(shortWallet(input.wallet))}</span></span>
<button class="button button-quiet" type="button" id="sign-out">Sign out</button>
</div>
</header>
<div class="frame">
${navigation(input.pages, input.page)}
<main id="main" tabindex="-1">
<h1>${esc(input.page.label)}</h1>
<p class="intro">${esc(input.page.intro)}</p>
<div id="flash" role="status" aria-live="polite"></div>
${input.content}
</main>
</div>`,
  );

/** Without a session: sign in with a wallet, then the same address shows the page asked for. */
export const renderSignIn = (input: FrameInput & { asked: AdminPage }): Html =>
  document(
    input,
    `Sign in · ${input.brandName} console`,
    { 'data-page': 'sign-in', 'data-next': input.asked.label },
    `<header class="topbar">${brand(input)}</header>
<main id="main" class="signin" tabindex="-1">
<section class="panel signin-card" aria-labelledby="signin-title">
<h1 id="signin-title">Sign in to your shop</h1>
<p>Use the wallet your shop is paid to. Your wallet asks you to sign a message: signing costs nothing and sends no transaction.</p>
<div id="signin">
<p id="wallet-state" class="wallet-state" role="status">Looking for wallets in this browser…</p>
<div id="wallet-list" class="wallet-list"></div>
<p id="signin-error" class="form-error" role="alert" hidden></p>
</div>
<noscript>${notice('warning', 'Signing in needs JavaScript and a browser wallet (an extension, or your wallet app’s browser).')}</noscript>
</section>
</main>`,
  );

/** An address under /console that is no page: said so, with the way back. */
export const renderNotFound = (input: FrameInput, path: string): Html =>
  document(
    input,
    `Not found · ${input.brandName} console`,
    { 'data-page': 'not-found' },
    `<header class="topbar">${brand(input)}</header>
<main id="main" class="signin" tabindex="-1">
<section class="panel signin-card" aria-labelledby="missing-title">
<h1 id="missing-title">There is no such page</h1>
<p>The console has no page at ${esc(path)}.</p>
<p><code>not_found</code></p>
<p><a href="${ADMIN_ROOT}">Go to the overview</a></p>
</section>
</main>`,
  );
