/**
 * The console's operations pages (API keys, receipts, terminal, webhooks) rendered on the server for
 * a signed-in wallet, and the refund's transaction checked against ethers' ABI encoding.
 */
import { Interface, Wallet } from 'ethers';
import { beforeEach, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../shared/app/api-keys';
import type { AppDeps } from '../../shared/app/deps';
import { updateMerchant } from '../../shared/app/merchants';
import { changeStatus } from '../../shared/app/receipt-status';
import { createReceipt } from '../../shared/app/receipts';
import { rotateWebhookSecret } from '../../shared/app/webhook-secrets';
import { memoryDeps } from '../../shared/composition';
import type { Session } from '../../shared/domain/session';
import { adminPage } from '../../web/admin/page';
import { refundTransaction, transferCalldata } from '../../web/admin/refund-call';

const wallet = '0x' + 'ab'.repeat(20);
const session: Session = { id: 's-1', wallet, csrfHash: 'x', createdAt: 0, expiresAt: Number.MAX_SAFE_INTEGER, revokedAt: null };
let deps: AppDeps;

const render = async (slug: string, query: Record<string, string> = {}) => {
  const page = await adminPage(deps, { session, wallet }, slug, query);
  return typeof page === 'string' ? page : String(page.body);
};
const key = async (owner = wallet) => (await createApiKey(deps, { wallet: owner, scopes: ['receipts:write', 'receipts:read'], plan: 'starter', brand: 'default' })).subscription;
const withSplit = () =>
  updateMerchant(deps, wallet, (current, now) => ({
    merchant: { ...current, split: { address: '0x' + '5'.repeat(40), recipients: [], platformFeeBps: 100, partnerFeeBps: 0, txHash: '0x' + '6'.repeat(64), chainId: 31337, deployedAt: now } },
    result: undefined,
  }));

beforeEach(() => {
  deps = memoryDeps();
});

describe('the API keys page', () => {
  it('offers every scope with a label, the wallet’s plan, and a copy-once reveal', async () => {
    const html = await render('api-keys');
    expect(html).toContain('Keys come on your plan: <strong>starter</strong>');
    for (const scope of ['inventory:read', 'orders:create', 'receipts:write', 'split:read']) expect(html).toMatch(new RegExp(`<label for="scope-${scope.replace(':', '-')}">`));
    expect(html).toContain('id="key-reveal"');
    expect(html).toContain('No keys yet');
  });

  it('lists keys active first; a revoked one offers a roll to each other active key, an active one a revoke button', async () => {
    const old = await key();
    const current = await key();
    const spare = await key();
    await revokeApiKey(deps, old.id, wallet);
    const foreign = await key('0x' + 'cd'.repeat(20));
    const html = await render('api-keys');
    expect(html.indexOf(current.keyPrefix)).toBeLessThan(html.indexOf(`data-key="${old.id}"`));
    const roll = html.slice(html.indexOf(`id="roll-${old.id}"`));
    const options = roll.slice(roll.indexOf('<option'), roll.indexOf('</select>'));
    expect(options).toContain(`value="${current.id}"`);
    expect(options).toContain(`value="${spare.id}"`);
    expect(options).not.toContain(old.id);
    expect(html).not.toContain(foreign.id);
    expect(html).toContain(`data-url="/api/keys/${old.id}/roll"`);
    expect(html).toContain(`aria-label="Revoke key ${current.keyPrefix}…"`);
    expect(html).toContain('Your keys (2 active of at most 10)');
  });
});

describe('the receipts page', () => {
  const receipt = async (signer: string | null, label = 'Tea') => {
    await createReceipt(deps, { wallet, subscriptionId: signer }, { id: 'R-page-1', lineItems: [{ label, priceUsd: 4 }], totalUsd: 4, webhook_url: 'http://127.0.0.1:9/hook' });
    return 'R-page-1';
  };

  it('lists receipts with live badges and a status filter, merchant text escaped', async () => {
    await receipt((await key()).id, '<b>Tea</b>');
    const html = await render('receipts');
    expect(html).toContain('<tr data-receipt="R-page-1">');
    expect(html).toContain('data-status="pending"');
    expect(html).toContain('&lt;b&gt;Tea&lt;/b&gt;');
    expect(html).not.toContain('<b>Tea</b>');
    expect(html).toContain('data-live-list="/api/console/receipts?limit=25"');
    expect(await render('receipts', { status: 'paid' })).toContain('No receipt is paid (paid).');
  });

  it('shows a receipt’s lines, history and deliveries, and says when a revoked key signs its webhooks', async () => {
    const signer = await key();
    const id = await receipt(signer.id);
    await changeStatus(deps, { wallet, receiptId: id, status: 'link_opened', actor: 'merchant' });
    let html = await render('receipts', { id });
    expect(html).toContain('Status history');
    expect(html).toMatch(/Link opened<\/span> <span class="hint">from Pending, by your backend/);
    expect(html).toContain(`Signed with your key <span class="mono">${signer.keyPrefix}…</span>`);
    expect(html).not.toContain('id="revoked-signer"');
    expect(html).toContain('A receipt can be refunded once it is paid.');
    await revokeApiKey(deps, signer.id, wallet);
    html = await render('receipts', { id });
    expect(html).toContain('id="revoked-signer"');
    expect(html).toContain('<strong>Signed by a revoked key</strong>');
  });

  it('asks for a refund of a paid receipt, up to what is left', async () => {
    const id = await receipt(null);
    await changeStatus(deps, { wallet, receiptId: id, status: 'paid', actor: 'service', facts: { paidAt: Date.now(), token: 'USDC' } });
    const html = await render('receipts', { id });
    expect(html).toContain('id="refund-ask"');
    expect(html).toMatch(/Up to \$\d+\.\d\d is left to refund/);
    expect(html).toContain('data-url="/api/receipts/refund"');
  });

  it('sends a receipt paid by card to the provider’s dashboard for its refund, with no refund form', async () => {
    const id = await receipt(null);
    const onramp = { provider: 'stripe', sessionId: 'cos_1', quoteId: 'q_1', redirectTo: 'https://pay.example/s', createdAt: Date.now(), state: 'delivered' as const, appliedEvents: [] };
    await changeStatus(deps, { wallet, receiptId: id, status: 'paid', actor: 'service', facts: { paidAt: Date.now(), token: 'USDC', onramp } });
    const html = await render('receipts', { id });
    expect(html).toContain('id="refund-by-card"');
    expect(html).toContain('Paid by card through stripe.');
    expect(html).not.toContain('id="refund-ask"');
  });

  it('lists every payment of a receipt, oldest first: an underpayment and its top-up, each linked to the explorer where there is one', async () => {
    const id = await receipt(null);
    const [short, rest] = ['0x' + '1a'.repeat(32), '0x' + '2b'.repeat(32)];
    const payer = '0x' + '9c'.repeat(20);
    const record = { token: 'USDT' as const, payer, expected: '52020001', at: Date.parse('2026-05-01T14:03:00Z') };
    const payments = [
      { ...record, txHash: short, amount: '51020000', blockNumber: 1201, outcome: 'underpaid' as const },
      { ...record, txHash: rest, amount: '1000001', blockNumber: 1207, outcome: 'paid' as const, at: record.at + 60_000 },
    ];
    expect(await render('receipts', { id })).toContain('No payment seen yet');
    await changeStatus(deps, { wallet, receiptId: id, status: 'paid', actor: 'service', facts: { paidAt: Date.now(), token: 'USDT', transactionHash: rest, payments } });
    const tokens = [{ symbol: 'USDT' as const, address: '0x' + 'b'.repeat(40), decimals: 6 }];
    deps = { ...deps, settings: { ...deps.settings, tokens, payments: { ...deps.settings.payments, explorerUrl: 'https://explorer.example/' } } };
    const html = await render('receipts', { id });
    const table = html.slice(html.indexOf('id="payments"'), html.indexOf('id="history"'));
    const rows = [...table.matchAll(/<tr data-payment="(0x[0-9a-f]+)" data-outcome="(\w+)">([\s\S]*?)<\/tr>/g)];
    expect(rows.map((row) => [row[1], row[2]])).toEqual([
      [short, 'underpaid'],
      [rest, 'paid'],
    ]);
    const [first, second] = rows.map((row) => row[3]!);
    expect(first).toContain(`<a href="https://explorer.example/tx/${short}" rel="noreferrer noopener" target="_blank">`);
    expect(first).toContain('<span class="badge badge-warning">Underpaid</span>');
    expect(first).toContain('<span>51.02 USDT <span class="hint">of 52.020001 USDT due</span></span>');
    expect(first).toContain(`title="${payer}"`);
    expect(first).toContain('<td class="num" data-label="Block">1201</td>');
    expect(first).toContain('2026-05-01 14:03 UTC');
    expect(second).toContain(`<a href="https://explorer.example/tx/${rest}"`);
    expect(second).toContain('<span class="badge badge-success">Paid</span>');
    expect(second).toContain('<td class="num" data-label="Amount"><span>1.000001 USDT</span></td>');
    expect(second).toContain('<td class="num" data-label="Block">1207</td>');
    expect(html).toContain('data-payments="2"');
    // No explorer on the deployment: the hashes are shown, not linked.
    deps = { ...deps, settings: { ...deps.settings, payments: { ...deps.settings.payments, explorerUrl: null } } };
    const plain = await render('receipts', { id });
    expect(plain).toContain(`<tr data-payment="${short}"`);
    expect(plain).not.toContain('/tx/');
  });

  it('shows a reverted payment as reverted, with nothing moved', async () => {
    const id = await receipt(null);
    const hash = '0x' + '3c'.repeat(32);
    const payments = [{ txHash: hash, token: null, payer: '0x' + '9c'.repeat(20), amount: '0', expected: null, blockNumber: 88, outcome: 'reverted' as const, at: Date.now() }];
    await changeStatus(deps, { wallet, receiptId: id, status: 'failed', actor: 'service', failure: { code: 'PORTAL_CHAIN_TX_REVERTED' }, facts: { payments } });
    const html = await render('receipts', { id });
    expect(html).toMatch(new RegExp(`<tr data-payment="${hash}" data-outcome="reverted">[\\s\\S]*?<span class="badge badge-danger">Reverted</span>[\\s\\S]*?<span class="hint">nothing moved</span>`));
  });

  it('shows another wallet’s receipt to no one', async () => {
    await createReceipt(deps, { wallet: '0x' + 'cd'.repeat(20), subscriptionId: null }, { id: 'R-theirs', lineItems: [{ label: 'Tea', priceUsd: 4 }], totalUsd: 4 });
    expect(await render('receipts', { id: 'R-theirs' })).toContain('You have no receipt R-theirs.');
  });
});

describe('the terminal page', () => {
  it('asks for a split first, with its form disabled', async () => {
    const html = await render('terminal');
    expect(html).toContain('Deploy your split first.');
    expect(html).toMatch(/<fieldset disabled>/);
  });

  it('takes an amount once the split is deployed, and names the webhook signing secret that signs (no key does)', async () => {
    await withSplit();
    const signer = await key();
    expect(await render('terminal')).toContain('These receipts send no webhooks until you <a href="/console/settings#webhook">make a webhook signing secret</a>');
    const { signingSecret } = await rotateWebhookSecret(deps, wallet);
    const html = await render('terminal');
    expect(html).not.toContain('Deploy your split first.');
    expect(html).toContain('<label for="f-amountUsd">Amount (USD)');
    expect(html).toContain('data-url="/api/console/receipts/terminal"');
    expect(html).toContain(`signed with your webhook signing secret, <span class="mono">${signingSecret.prefix}…</span>`);
    expect(html).not.toContain(signer.keyPrefix);
  });
});

describe('the webhooks page', () => {
  it('needs a signing secret or a key to sign a test event, then offers the secret first and each key, newest first, with the shop’s URL', async () => {
    expect(await render('webhooks')).toContain('you have neither');
    await updateMerchant(deps, wallet, (current) => ({ merchant: { ...current, shop: { ...current.shop, webhookUrl: 'https://shop.example/hooks' } }, result: undefined }));
    const older = await key();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const newer = await key();
    const html = await render('webhooks');
    expect(html).toContain('value="https://shop.example/hooks"');
    expect(html.indexOf(`value="${newer.id}" selected`)).toBeGreaterThan(0);
    expect(html.indexOf(newer.id)).toBeLessThan(html.indexOf(older.id));
    expect(html).toContain('You have no webhook signing secret yet');
    const { signingSecret } = await rotateWebhookSecret(deps, wallet);
    const signed = await render('webhooks');
    expect(signed).toContain(`<option value="" selected>Webhook signing secret · ${signingSecret.prefix}…</option>`);
    expect(signed.indexOf(signingSecret.prefix)).toBeLessThan(signed.indexOf(newer.id));
    expect(signed).not.toContain('You have no webhook signing secret yet');
  });
});

describe('the refund’s transaction', () => {
  const erc20 = new Interface(['function transfer(address to, uint256 amount) returns (bool)']);
  it('is an ERC-20 transfer to the buyer for a token, plain ETH otherwise, as ethers encodes them', () => {
    const [from, to, token] = [Wallet.createRandom().address.toLowerCase(), Wallet.createRandom().address.toLowerCase(), Wallet.createRandom().address.toLowerCase()];
    expect(transferCalldata(to, '12345678')).toBe(erc20.encodeFunctionData('transfer', [to, 12_345_678n]));
    expect(refundTransaction({ from, to, amount: '5000000', tokenAddress: token })).toEqual({ from, to: token, value: '0x0', data: erc20.encodeFunctionData('transfer', [to, 5_000_000n]) });
    expect(refundTransaction({ from, to, amount: '1000000000000000000', tokenAddress: '' })).toEqual({ from, to, value: '0xde0b6b3a7640000' });
    expect(() => transferCalldata(to, '0')).toThrow('out of range');
    expect(() => transferCalldata('0x12', '1')).toThrow('not an address');
  });
});
