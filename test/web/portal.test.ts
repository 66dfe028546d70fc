/**
 * The portal's pure parts: the page's states as rendered for each kind of receipt, the payment
 * transaction the script asks a wallet for (checked against ethers' own encoding), what a wallet's
 * error means, and the shop's colours.
 */
import { Interface } from 'ethers';
import { describe, expect, it } from 'vitest';
import type { PortalView } from '../../shared/domain/portal-views';
import { formatUnits } from '../../shared/domain/units';
import { brandProperties, contrastRatio, isHexColor, readableOn } from '../../web/portal/colors';
import { formatCountdown, remainingUnits, SHOWN_DECIMALS, shownUnits, transactionUrl } from '../../web/portal/format';
import { defaultToken, pricedRows, renderPortalPage, statePanel } from '../../web/portal/render';
import { buyerMessages, classifyWalletError, paymentTransaction, toQuantity, transferCalldata } from '../../web/portal/wallet-calls';

const view = (fields: Partial<PortalView> = {}): PortalView => ({
  receiptId: 'R-1',
  status: 'pending',
  shop: { name: 'Demo Coffee', logoUrl: '', colors: { primary: '#1a56db', accent: '#0e9f6e', background: '#ffffff' } },
  currency: 'USD',
  lineItems: [
    { label: 'Ceramic mug', sku: 'MUG', qty: 2, unitPriceUsd: 12, priceUsd: 24 },
    { label: 'Tax', priceUsd: 1.74 },
    { label: 'Processing Fee', priceUsd: 0.39 },
  ],
  totalUsd: 26.13,
  customerTotalUsd: 26.13,
  taxRate: 0.0725,
  jurisdictionCode: 'US-CA',
  createdAt: 1_700_000_000_000,
  expiresAt: 1_700_000_000_000 + 86_400_000,
  payable: true,
  notPayableReason: null,
  chainId: 31337,
  tokens: [
    { symbol: 'USDC', decimals: 6 },
    { symbol: 'USDT', decimals: 6 },
    { symbol: 'ETH', decimals: 18 },
  ],
  recommendedToken: null,
  quote: null,
  payment: null,
  underpaid: null,
  failure: null,
  card: null,
  ...fields,
});

const input = { script: '/portal/assets/portal-A.js', style: '/portal/assets/portal-B.css', explorerUrl: 'https://explorer.example', paymentUrl: 'http://localhost/pay/R-1', qrUrl: '/api/portal/R-1/qr.svg', apiUrl: '/api/portal/R-1' };
const text = (html: string | null) => (html ?? '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();

describe('the rendered page', () => {
  it('itemizes each line with its quantity and unit price, tax with its rate, and the fee', () => {
    expect(pricedRows(view())).toEqual([
      { label: 'Ceramic mug', detail: '2 × $12.00', usd: 24, fee: false },
      { label: 'Tax', detail: '7.25 % · US-CA', usd: 1.74, fee: true },
      { label: 'Processing Fee', detail: null, usd: 0.39, fee: true },
    ]);
    expect(text(renderPortalPage(view(), input))).toContain('Total $26.13');
  });

  it('says what each state means for the buyer', () => {
    const hash = '0x' + 'ab'.repeat(32);
    const paid = statePanel(view({ status: 'paid', payable: false, notPayableReason: 'paid', payment: { transactionHash: hash, buyerWallet: null, token: 'USDC', amount: '26130042', paidAt: 1_700_000_100_000, explorerUrl: null } }), input);
    expect(text(paid)).toContain('Payment received Thank you. Demo Coffee received 26.130042 USDC.');
    expect(paid).toContain(`href="https://explorer.example/tx/${hash}"`);
    // The signed proof, to keep: a download of the portal's proof route.
    expect(paid).toContain('<a class="proof-link" href="/api/portal/R-1/proof" download="receipt-R-1.json" type="application/json">Download receipt</a>');
    expect(text(statePanel(view({ status: 'refunded', payable: false, notPayableReason: 'refunded' }), input))).not.toContain('Download receipt');
    // The success screen the script shows after a wallet payment has it too, hidden with it until then.
    expect(/<section[^>]*id="success"[^>]*hidden>[\s\S]*?href="\/api\/portal\/R-1\/proof"[\s\S]*?<\/section>/.test(renderPortalPage(view(), input))).toBe(true);
    // Without an explorer: the hash, shortened, whole in its title.
    expect(statePanel(view({ status: 'reconciled', payable: false, notPayableReason: 'paid', payment: { transactionHash: hash, buyerWallet: null, token: 'USDC', amount: '1', paidAt: null, explorerUrl: null } }), { ...input, explorerUrl: null })).toContain(`title="${hash}"`);
    expect(text(statePanel(view({ status: 'refund_requested', payable: false, notPayableReason: 'refunded' }), input))).toContain('Refund in progress');
    expect(text(statePanel(view({ status: 'refunded', payable: false, notPayableReason: 'refunded' }), input))).toContain('Refunded');
    const failure = { code: 'PORTAL_CHAIN_TX_REVERTED', reason: 'The contract execution reverted', action: 'Ask the buyer to retry.' };
    expect(text(statePanel(view({ status: 'failed', failure }), input))).toBe('Payment failed The contract execution reverted Ask the buyer to retry. You can try again below.');
    expect(text(statePanel(view({ status: 'failed', payable: false, notPayableReason: 'expired', failure }), input))).toContain('Ask the shop for a new payment link.');
    expect(text(statePanel(view({ payable: false, notPayableReason: 'split_required' }), input))).toContain('This shop cannot take payments yet');
    expect(text(statePanel(view({ payable: false, notPayableReason: 'no_chain' }), input))).toContain('Payments are not available right now');
    expect(text(statePanel(view({ underpaid: { token: 'USDC', received: '20000000', expected: '26130042' } }), input))).toBe(
      'Part of the payment arrived Received 20 of 26.130042 USDC. Send the remaining 6.130042 USDC to complete the payment.',
    );
    expect(text(statePanel(view({ status: 'checkout_success' }), input))).toContain('Confirming your payment');
    expect(statePanel(view(), input)).toBeNull();
  });

  it('offers the open quote’s token first, else a stablecoin', () => {
    expect(defaultToken(view())).toBe('USDC');
    expect(defaultToken(view({ tokens: [{ symbol: 'ETH', decimals: 18 }, { symbol: 'USDT', decimals: 6 }] }))).toBe('USDT');
    const quote = { quoteId: 'q', token: 'ETH' as const, tokenAddress: null, chainId: 31337, payTo: '0x' + '5'.repeat(40), amount: '8700000000000000', decimals: 18, display: '0.0087', usd: 26.13, rate: 3000, expiresAt: 0, uri: '' };
    expect(defaultToken(view({ quote }))).toBe('ETH');
    // The shop's reserve recommendation comes before the first stablecoin, the open quote before both.
    expect(defaultToken(view({ recommendedToken: 'USDT' }))).toBe('USDT');
    expect(defaultToken(view({ recommendedToken: 'ETH', quote: { ...quote, token: 'USDC' } }))).toBe('USDC');
    expect(defaultToken(view({ recommendedToken: 'ETH', tokens: [{ symbol: 'USDC', decimals: 6 }] }))).toBe('USDC');
    expect(renderPortalPage(view({ recommendedToken: 'ETH' }), input)).toContain('<input type="radio" name="token" value="ETH" checked>');
    expect(renderPortalPage(view({ quote }), input)).toContain('data-amount-for="ETH">0.0087 ETH</span>');
  });
});

describe('ETH amounts on the page', () => {
  const eth = (fields: Partial<PortalView> = {}) => renderPortalPage(view(fields), input);
  const quote = { quoteId: 'q', token: 'ETH' as const, tokenAddress: null, chainId: 31337, payTo: '0x' + '5'.repeat(40), amount: '8710000000000001', decimals: 18, display: '0.008710000000000001', usd: 26.13, rate: 3000, expiresAt: 0, uri: 'ethereum:0x5@31337?value=8710000000000001' };

  it('shows at most 6 decimals, rounded up, the same figure asked for and received; the wallet call keeps the exact amount', () => {
    const page = eth({ quote });
    expect(page).toContain('data-amount-for="ETH">0.008711 ETH</span>');
    expect(page).toContain('<strong id="quote-amount">0.008711 ETH</strong>');
    expect(page).not.toMatch(/0\.00871000000/);
    expect(paymentTransaction(quote, '0x' + '9'.repeat(40)).value).toBe(toQuantity(8_710_000_000_000_001n));
    const hash = '0x' + 'ab'.repeat(32);
    const paid = statePanel(view({ status: 'paid', payable: false, notPayableReason: 'paid', payment: { transactionHash: hash, buyerWallet: null, token: 'ETH', amount: '8710000000000001', paidAt: null, explorerUrl: null } }), input);
    expect(text(paid)).toContain('Demo Coffee received 0.008711 ETH.');
    const underpaid = statePanel(view({ underpaid: { token: 'ETH', received: '4354500000000000', expected: '8710000000000001' } }), input);
    expect(text(underpaid)).toBe('Part of the payment arrived Received 0.004355 of 0.008711 ETH. Send the remaining 0.004356 ETH to complete the payment.');
  });
});

describe('the payment transaction', () => {
  const erc20 = new Interface(['function transfer(address to, uint256 amount)']);
  const split = '0x5FbDB2315678afecb367f032d93F642f64180aa3';

  it('encodes transfer(address,uint256) exactly as ethers does', () => {
    for (const amount of [0n, 1n, 26_130_042n, 2n ** 255n + 7n, 2n ** 256n - 1n]) {
      expect(transferCalldata(split, amount)).toBe(erc20.encodeFunctionData('transfer', [split, amount]));
    }
    expect(() => transferCalldata('0x1234', 1n)).toThrow();
    expect(() => transferCalldata(split, 2n ** 256n)).toThrow();
    expect(() => transferCalldata(split, -1n)).toThrow();
  });

  it('sends ETH to the split with the amount as a hex quantity, a token through its contract', () => {
    const from = '0x' + '9'.repeat(40);
    expect(paymentTransaction({ tokenAddress: null, payTo: split, amount: '1000000000000000001' }, from)).toEqual({ from, to: split, value: '0xde0b6b3a7640001' });
    const usdc = '0x' + 'a'.repeat(40);
    expect(paymentTransaction({ tokenAddress: usdc, payTo: split, amount: '26130042' }, from)).toEqual({ from, to: usdc, data: erc20.encodeFunctionData('transfer', [split, 26_130_042n]) });
    expect([toQuantity(0), toQuantity(31337), toQuantity('255')]).toEqual(['0x0', '0x7a69', '0xff']);
  });
});

describe('wallet errors', () => {
  it.each([
    [{ code: 4001, message: 'User rejected the request.' }, 'PORTAL_CHAIN_USER_REJECTED'],
    [{ code: -32603, message: 'Internal error', data: { code: 4001 } }, 'PORTAL_CHAIN_USER_REJECTED'],
    [{ code: 'ACTION_REJECTED' }, 'PORTAL_CHAIN_USER_REJECTED'],
    [{ code: -32000, message: 'insufficient funds for gas * price + value' }, 'PORTAL_CHAIN_INSUFFICIENT_BALANCE'],
    [{ code: -32603, message: 'Internal JSON-RPC error.', data: { message: 'execution reverted: ERC20: transfer amount exceeds balance' } }, 'PORTAL_CHAIN_INSUFFICIENT_BALANCE'],
    [{ code: 3, message: 'execution reverted', data: '0xe450d38c000000000000000000000000' }, 'PORTAL_CHAIN_INSUFFICIENT_BALANCE'],
    [new Error('Failed to fetch'), 'PORTAL_SYS_GENERIC_FAILURE'],
    ['weird', 'PORTAL_SYS_GENERIC_FAILURE'],
    [null, 'PORTAL_SYS_GENERIC_FAILURE'],
  ])('%j → %s', (error, code) => {
    expect(classifyWalletError(error)).toBe(code);
    expect(buyerMessages[classifyWalletError(error)].message).toBeTruthy();
  });
});

describe('formatting', () => {
  it('formats token amounts as the payment rules do, and what is left after an underpayment', () => {
    expect([['0', 6], ['1', 6], ['26130042', 6], ['8710000000000001', 18], ['-5', 2], ['100', 0]].map(([amount, decimals]) => formatUnits(String(amount), Number(decimals)))).toEqual([
      '0',
      '0.000001',
      '26.130042',
      '0.008710000000000001',
      '-0.05',
      '100',
    ]);
    expect(remainingUnits('30000000', '26130042', 6)).toBe('0');
    expect([formatCountdown(600_000), formatCountdown(65_001), formatCountdown(-1)]).toEqual(['10:00', '1:06', '0:00']);
    expect([transactionUrl('https://basescan.org/', '0xab'), transactionUrl(null, '0xab')]).toEqual(['https://basescan.org/tx/0xab', null]);
  });
});

describe('a token amount as the page shows it', () => {
  // Rounded up to 6 decimals, not half-up: 0.0000045 ETH shows as 0.000005, and 1 wei as 0.000001, never 0.
  it.each([
    ['3333333333333333', 18, '0.003334'],
    ['3333000000000000', 18, '0.003333'],
    ['3333000000000001', 18, '0.003334'],
    ['4500000000000', 18, '0.000005'],
    ['4499999999999', 18, '0.000005'],
    ['1', 18, '0.000001'],
    ['0', 18, '0'],
    ['999999999999999999', 18, '1'],
    ['1000000000000000000', 18, '1'],
    ['1000000000000000001', 18, '1.000001'],
    ['12345678901234567890123', 18, '12345.678902'],
    ['26130042', 6, '26.130042'],
    ['1', 6, '0.000001'],
    ['123', 2, '1.23'],
    ['100', 0, '100'],
    ['1234561', 7, '0.123457'],
  ])('%s at %i decimals shows as %s', (amount, decimals, shown) => {
    expect(shownUnits(amount, decimals)).toBe(shown);
    expect(shownUnits(BigInt(amount), decimals)).toBe(shown);
  });

  it('is never less than the amount, less than one shown unit above it, with at most 6 decimals', () => {
    const atomic = (shown: string, decimals: number) => {
      const [whole, fraction = ''] = shown.split('.');
      return BigInt(whole!) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
    };
    const step = 10n ** BigInt(18 - SHOWN_DECIMALS);
    let seed = 0x2545f491n;
    for (let i = 0; i < 500; i++) {
      seed = (seed * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
      const amount = seed % 10n ** 20n;
      const shown = shownUnits(amount, 18);
      expect(shown.split('.')[1]?.length ?? 0).toBeLessThanOrEqual(SHOWN_DECIMALS);
      const back = atomic(shown, 18);
      expect(back >= amount && back - amount < step, `${amount} shown as ${shown}`).toBe(true);
    }
  });
});

describe('the shop’s colours', () => {
  it('are applied only as #rrggbb, with a readable text colour on each', () => {
    expect(brandProperties({ primary: '#ffeb3b', accent: 'red', background: 'url(https://x)' })).toEqual({ '--brand': '#ffeb3b', '--on-brand': '#111827' });
    expect(brandProperties({ primary: '#1a56db', background: '#0b0b0b' })).toEqual({ '--brand': '#1a56db', '--on-brand': '#ffffff', '--page': '#0b0b0b', '--on-page': '#ffffff' });
    expect(isHexColor('#12345g')).toBe(false);
    for (const background of ['#000000', '#ffffff', '#1a56db', '#0e9f6e', '#ffeb3b', '#b91c1c']) expect(contrastRatio(readableOn(background), background)).toBeGreaterThanOrEqual(4.5);
    // A mid grey has no colour that reaches 4.5:1; the better of the two is taken.
    expect(contrastRatio(readableOn('#777777'), '#777777')).toBe(Math.max(contrastRatio('#111827', '#777777'), contrastRatio('#ffffff', '#777777')));
  });
});
