/**
 * The merchant console in a real browser (headless Chromium driven by playwright-core) against
 * `npm start` in a data folder of its own, with the test wallet injected into the page
 * (test/support/browser.ts). The merchants are new wallets of this run: they sign their sign-in
 * messages here, and anvil sends their transactions (it impersonates them, funded with test ETH),
 * so no anvil account another test uses is touched.
 *
 * Every page is photographed at 360 px and at 1280 px wide into test-results/admin/.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Wallet } from 'ethers';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, photographer, rpc, type OpenedPage } from '../support/browser';
import { root, stackEnv, startStack, stopStack, type StartedStack } from '../support/stack';

const dataDir = mkdtempSync(join(tmpdir(), 'admin-browser-'));
const env = stackEnv(dataDir);
const shots = join(root, 'test-results', 'admin');
const phone = { width: 360, height: 780 };
const desktop = { width: 1280, height: 900 };
const shot = photographer(shots);

let stack: StartedStack;
let browser: Browser;
let rpcUrl: string;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  stack = await startStack(env);
  rpcUrl = (JSON.parse(readFileSync(join(dataDir, 'local-credentials.json'), 'utf8')) as { rpcUrl: string }).rpcUrl;
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (stack && stack.child.exitCode === null) await stopStack(stack);
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

/** A wallet no one has used: anvil sends its transactions (impersonated, with 10 test ETH); it signs messages here. */
const newMerchant = async () => {
  const wallet = Wallet.createRandom();
  const account = wallet.address.toLowerCase();
  await rpc(rpcUrl, 'anvil_setBalance', [account, '0x8ac7230489e80000']);
  await rpc(rpcUrl, 'anvil_impersonateAccount', [account]);
  return { account, privateKey: wallet.privateKey };
};

type Merchant = Awaited<ReturnType<typeof newMerchant>>;

const openAs = (merchant: Merchant | undefined, viewport = phone): Promise<OpenedPage> => openPage(browser, rpcUrl, viewport, merchant && { account: merchant.account, privateKey: merchant.privateKey });

/** Signs in on the sign-in page the console shows without a session; the same address then shows its page. */
const signIn = async (page: Page) => {
  await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
  await page.locator('#sign-out').waitFor({ timeout: 20_000 });
};

describe('the merchant console in a browser', () => {
  it('shows the sign-in page without a session, signs a new wallet in and out', async () => {
    const merchant = await newMerchant();
    const { context, page, problems } = await openAs(merchant);
    try {
      await page.goto(`${stack.baseUrl}/admin/inventory`);
      expect(await page.locator('h1').textContent()).toBe('Sign in to your shop');
      await page.getByRole('button', { name: 'Sign in with Test Wallet' }).waitFor();
      await shot(page, 'signin', 'phone');
      // By keyboard: the sign-in button takes Enter; the wallet is asked for its account and a signature.
      await page.getByRole('button', { name: 'Sign in with Test Wallet' }).focus();
      await page.keyboard.press('Enter');
      await page.locator('#sign-out').waitFor({ timeout: 20_000 });
      expect(await page.locator('main h1').textContent()).toBe('Inventory');
      expect(await page.locator('.nav [aria-current="page"]').textContent()).toBe('Inventory');
      expect(await page.locator('.account-wallet').getAttribute('title')).toBe(merchant.account);
      await page.locator('#sign-out').click();
      await page.locator('h1', { hasText: 'Sign in to your shop' }).waitFor();
      // Signed out for good: the pages show the sign-in page again.
      await page.goto(`${stack.baseUrl}/admin/split`);
      expect(await page.locator('h1').textContent()).toBe('Sign in to your shop');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('shows the sign-in page on a desktop too', async () => {
    const { context, page, problems } = await openAs(await newMerchant(), desktop);
    try {
      await page.goto(`${stack.baseUrl}/admin`);
      await page.getByRole('button', { name: 'Sign in with Test Wallet' }).waitFor();
      await shot(page, 'signin', 'desktop');
      await signIn(page);
      expect(await page.locator('main h1').textContent()).toBe('Overview');
      await shot(page, 'overview', 'desktop');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
