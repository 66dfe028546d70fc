/**
 * The Split page's "Deposit addresses" panel in a real browser (headless Chromium), on the run's anvil
 * chain: a receipt paid at its deposit address (quoted, paid and verified as the portal does), swept
 * into the split from the merchant's own wallet by keyboard; a token the shop does not accept, sent to
 * a receipt's address, recovered to the split from the form; an invalid token address answered by the
 * API's error next to the field. The console is served by the local host over memory stores with the
 * real EVM adapter; the merchant is a new wallet that anvil impersonates (its transactions are sent by
 * the node), signed in through the real sign-in routes.
 *
 * Photographed into test-results/admin/deposits-{phone,desktop}.png (the panel alone into
 * deposits-panel-*.png), and after each step (deposits-swept-phone, deposits-invalid-desktop,
 * deposits-recovered-desktop).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Contract, ContractFactory, Wallet, type JsonRpcProvider } from 'ethers';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import type { EvmChain } from '../../shared/adapters/evm/chain';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { AppDeps } from '../../shared/app/deps';
import { quoteFor } from '../../shared/app/payments/portal';
import { verifyPayment } from '../../shared/app/payments/verify';
import { createReceipt } from '../../shared/app/receipts';
import { memoryDeps } from '../../shared/composition';
import { impersonatedWallet, launchBrowser, openPage, photographer, type OpenedPage } from '../support/browser';
import { chainWithOwnFeed, merchantWithSplit, payingSettings, testAccounts } from '../support/chain-merchant';
import { startHost, type RunningHost } from '../support/http';
import { signInAs } from '../support/session';
import { root } from '../support/stack';

const local = inject('chain');
const shots = join(root, 'test-results', 'admin');
const shot = photographer(shots);
const phone = { width: 360, height: 780 };
const desktop = { width: 1280, height: 900 };

let provider: JsonRpcProvider;
let accounts: Awaited<ReturnType<typeof testAccounts>>;
let chain: EvmChain;
let deps: AppDeps;
let host: RunningHost;
let browser: Browser;
let merchant: { account: string; privateKey: string };
let split: string;
let cookies: Array<{ name: string; value: string; url: string }>;
let usdc: Contract;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  provider = createProvider(local.rpcUrl, local.chainId);
  accounts = await testAccounts(provider);
  let feed: string;
  ({ chain, ethUsdFeed: feed } = await chainWithOwnFeed(() => accounts.newWallet()));
  const base = memoryDeps({ chain });
  deps = { ...base, settings: payingSettings(base.settings, feed) };
  merchant = await impersonatedWallet(local.rpcUrl);
  ({ split } = await merchantWithSplit(deps, chain, merchant.account));
  host = await startHost(deps);
  const session = await signInAs(new Wallet(merchant.privateKey));
  cookies = Object.entries(session.answer.cookies!).map(([name, cookie]) => ({ name, value: cookie.value, url: host.url }));
  usdc = new Contract(local.usdc, testUsdcArtifact.abi, provider);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await host?.close();
  chain?.destroy();
  provider?.destroy();
});

const balanceOf = (token: Contract, holder: string) => token.getFunction('balanceOf').staticCall(holder) as Promise<bigint>;

let serial = 0;
/** A receipt of the shop, quoted in USDC (which fixes its deposit address) and paid there by a buyer, verified as the portal reports it. */
const paidReceipt = async (totalUsd: number) => {
  const id = `R-DEP-${Date.now()}-${++serial}`;
  await createReceipt(deps, { wallet: merchant.account, subscriptionId: null }, { id, lineItems: [{ label: 'Beans, 1 kg', priceUsd: totalUsd }], totalUsd });
  const quote = await quoteFor(deps, id, 'USDC');
  const buyer = await accounts.newWallet([local.usdc]);
  const sent = await new Contract(local.usdc, testUsdcArtifact.abi, buyer).getFunction('transfer')(quote.payTo, BigInt(quote.amount));
  await sent.wait();
  expect(await verifyPayment(deps, id, sent.hash as string)).toMatchObject({ outcome: 'paid', status: 'paid' });
  const receipt = (await deps.receipts.get(merchant.account, id))!.value;
  expect(receipt.deposit).toEqual({ address: quote.payTo, split });
  return { id, deposit: quote.payTo, amount: BigInt(quote.amount) };
};

const open = async (viewport: { width: number; height: number }): Promise<OpenedPage> => {
  const opened = await openPage(browser, local.rpcUrl, viewport, merchant);
  await opened.context.addCookies(cookies);
  await opened.page.goto(`${host.url}/console/split`);
  await opened.page.locator('#deposits').waitFor();
  return opened;
};

/** Nothing on the page wider than the window but the tables' own frames and the navigation's. */
const overflowing = (page: Page): Promise<string[]> =>
  page.evaluate(`[...document.querySelectorAll('body *')]
    .filter((element) => !element.closest('.table-wrap, .nav') && element.getBoundingClientRect().right > ${page.viewportSize()!.width} + 1)
    .map((element) => element.tagName.toLowerCase() + (element.id ? '#' + element.id : '') + '.' + element.className)`);

/** Controls of the panel without a name a screen reader says. */
const unlabelled = (page: Page): Promise<string[]> =>
  page.evaluate(`[...document.querySelectorAll('#deposits input:not([type="hidden"]), #deposits button')]
    .filter((control) => !(control.labels && control.labels.length > 0) && !control.getAttribute('aria-label') && !control.getAttribute('aria-labelledby') && !(control.tagName === 'BUTTON' && control.textContent.trim()))
    .map((control) => control.outerHTML.slice(0, 120))`);

/** Presses Tab until the focus is on `selector`, and answers the focused control's outline (its focus ring). */
const tabTo = async (page: Page, selector: string): Promise<{ style: string; width: number }> => {
  for (let presses = 0; presses < 60; presses++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(`Boolean(document.activeElement && document.activeElement.matches(${JSON.stringify(selector)}))`)) {
      return page.evaluate('(() => { const style = getComputedStyle(document.activeElement); return { style: style.outlineStyle, width: parseFloat(style.outlineWidth) }; })()');
    }
  }
  throw new Error(`Tab never reached ${selector}`);
};

const flash = (page: Page, text: string) => page.locator('#flash.notice-success', { hasText: text }).waitFor({ timeout: 30_000 });

/** The whole page from its top (a reload keeps the scroll, and the sticky navigation would be drawn where it was). */
const photograph = async (page: Page, scenario: string, step: 'phone' | 'desktop') => {
  await page.evaluate('window.scrollTo(0, 0)');
  await shot(page, scenario, step);
};

describe('the deposit addresses on the Split page', () => {
  it.each([
    ['phone', phone],
    ['desktop', desktop],
  ] as const)('lays the panel out on a %s: no sideways scrolling, every control named, a focus ring on each', async (name, viewport) => {
    const { context, page, problems } = await open(viewport);
    try {
      expect(await overflowing(page)).toEqual([]);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(viewport.width);
      expect(await unlabelled(page)).toEqual([]);
      expect(await page.getByRole('form', { name: 'A token you do not accept' }).count()).toBe(1);
      await page.locator('main').focus();
      for (const selector of ['#sweep-button', '#f-token', '#recover-button']) {
        const ring = await tabTo(page, selector);
        expect(ring.style, selector).not.toBe('none');
        expect(ring.width, selector).toBeGreaterThan(0);
      }
      await page.locator('#sweep-button').focus();
      await page.locator('#deposits').screenshot({ path: join(shots, `deposits-panel-${name}.png`) });
      await photograph(page, 'deposits', name);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('sweeps a receipt paid at its deposit address into the split from the wallet, by keyboard, on a 360 px phone', async () => {
    const paid = await paidReceipt(52.55);
    expect(await balanceOf(usdc, paid.deposit)).toBe(paid.amount);
    const before = await balanceOf(usdc, split);
    const { context, page, problems } = await open(phone);
    try {
      expect(await overflowing(page)).toEqual([]);
      expect(await unlabelled(page)).toEqual([]);
      await page.locator('main').focus();
      const ring = await tabTo(page, '#sweep-button');
      expect(ring.style).not.toBe('none');
      expect(ring.width).toBeGreaterThan(0);
      await page.evaluate('window.notReloaded = true');
      await page.keyboard.press('Enter');
      await flash(page, 'Moved what 1 deposit address held into your split.');
      // Reloaded once mined: the server's render, with the button back.
      expect(await page.evaluate('window.notReloaded')).toBeUndefined();
      expect(await page.locator('#sweep-button').textContent()).toBe('Sweep paid deposits now');
      expect(await balanceOf(usdc, paid.deposit)).toBe(0n);
      expect(await balanceOf(usdc, split)).toBe(before + paid.amount);
      expect(await overflowing(page)).toEqual([]);
      await photograph(page, 'deposits-swept', 'phone');
      // Nothing waits any more: the button says so, and the wallet is asked for nothing (the reload began a new list of its calls).
      await page.locator('#sweep-button').click();
      await page.locator('#sweep-status', { hasText: 'Nothing waits at your receipts’ addresses.' }).waitFor();
      expect(await page.evaluate('window.__walletCalls.filter((call) => call === "eth_sendTransaction").length')).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('recovers a token the shop does not accept from a receipt’s address to the split, and shows an invalid address’s error at the field, on a desktop', async () => {
    const paid = await paidReceipt(7.5);
    // Another token, sent to the receipt's deposit address by someone: only the split can get it.
    const funder = await accounts.newWallet();
    const deployed = await new ContractFactory(testUsdcArtifact.abi, testUsdcArtifact.bytecode, funder).deploy();
    await deployed.waitForDeployment();
    const other = new Contract((await deployed.getAddress()).toLowerCase(), testUsdcArtifact.abi, funder);
    const token = await other.getAddress();
    await (await other.getFunction('mint')(paid.deposit, 4_200_000n)).wait();
    const { context, page, problems } = await open(desktop);
    try {
      expect(await overflowing(page)).toEqual([]);
      expect(await unlabelled(page)).toEqual([]);
      expect(await page.getByLabel('Token contract').getAttribute('id')).toBe('f-token');
      await page.locator('main').focus();
      const ring = await tabTo(page, '#f-token');
      expect(ring.style).not.toBe('none');

      // An address that is not one, and none at all: the API's message, next to the field, the field marked and focused;
      // never a sweep of the paid deposits instead.
      const slot = page.locator('[data-error-for="token"]');
      for (const typed of ['0x1234', '']) {
        await page.locator('#f-token').fill(typed);
        await page.keyboard.press('Enter');
        await slot.waitFor({ state: 'visible' });
        expect(await slot.textContent()).toBe('must be a 0x address');
        expect(await page.locator('#f-token').getAttribute('aria-invalid')).toBe('true');
        expect(await page.evaluate('document.activeElement.id')).toBe('f-token');
        expect(await page.locator('#recover-button').isEnabled()).toBe(true);
        expect(await page.locator('#recover-error').isHidden()).toBe(true);
        expect(await page.locator('#f-token').inputValue()).toBe(typed);
        if (typed) await page.locator('#deposits').screenshot({ path: join(shots, 'deposits-invalid-desktop.png') });
      }
      expect(await page.evaluate('window.__walletCalls.filter((call) => call === "eth_sendTransaction").length')).toBe(0);
      expect(await balanceOf(usdc, paid.deposit)).toBe(paid.amount);

      // The token's contract: swept from the receipt's address (the accepted USDC waits there too, untouched by a recovery).
      await page.locator('#f-token').fill(token);
      await page.keyboard.press('Enter');
      await flash(page, 'Moved what 1 deposit address held into your split.');
      expect(await balanceOf(other, paid.deposit)).toBe(0n);
      expect(await balanceOf(other, split)).toBe(4_200_000n);
      expect(await balanceOf(usdc, paid.deposit)).toBe(paid.amount);
      expect(await overflowing(page)).toEqual([]);
      await photograph(page, 'deposits-recovered', 'desktop');
      // The browser logs each 400 answer it was given; nothing else went wrong.
      expect(problems.filter((problem) => !/status of 400/.test(problem))).toEqual([]);
      expect(problems.filter((problem) => /status of 400/.test(problem))).toHaveLength(2);
    } finally {
      await context.close();
    }
  }, 90_000);
});
