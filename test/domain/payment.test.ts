import { describe, expect, it } from 'vitest';
import {
  CHAIN_CLOCK_SKEW_SECONDS,
  formatUnits,
  isStale,
  judgePayment,
  paymentUri,
  quoteAmount,
  rateOf,
  TxHash,
  ZERO_ADDRESS,
  type FeedPrice,
  type JudgeInput,
  type MinedTransaction,
  type PayToken,
  type PayTokenSymbol,
  type Quote,
  type ValueMove,
} from '../../shared/domain/payment';

/** Token contracts as a chain's configuration spells them (checksummed, mixed case). */
const USDC_ADDRESS = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
const USDT_ADDRESS = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const usdc: PayToken = { symbol: 'USDC', address: USDC_ADDRESS, decimals: 6 };
const usdt: PayToken = { symbol: 'USDT', address: USDT_ADDRESS, decimals: 6 };
const eth: PayToken = { symbol: 'ETH', address: ZERO_ADDRESS, decimals: 18 };
const tokens: readonly PayToken[] = [usdc, usdt, eth];

/** The receipt's deposit address. */
const DEPOSIT = '0xde90de90de90de90de90de90de90de90de90de90';
const SPLIT = '0x5a11c0ffee5a11c0ffee5a11c0ffee5a11c0ffee';
const BUYER = '0xb0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0';
const RELAYER = '0x7e1a7e1a7e1a7e1a7e1a7e1a7e1a7e1a7e1a7e1a';
const STRANGER = '0x5757575757575757575757575757575757575757';
const ROUTER = '0x4040404040404040404040404040404040404040';
const CHAIN_ID = 8453;

const price = (usd: string, updatedAt = 0): FeedPrice => {
  const [whole = '0', fraction = ''] = usd.split('.');
  return { answer: BigInt(whole + fraction.padEnd(8, '0')), decimals: 8, updatedAt };
};
const ETH_3000 = price('3000.00000000');
/** Exactly 0.02 ETH for 52.02 USD. */
const ETH_2601 = price('2601');

const CENTS = 5_202;
/** The receipt was made at 1_700_000_000.4 s; the floor used against block times is 1_700_000_000 s. */
const RECEIPT_CREATED = 1_700_000_000_400;
const RECEIPT_SECOND = 1_700_000_000;
const QUOTE_CREATED = 1_700_000_001_000;
/** A whole second, so a block can carry exactly the lock's end. */
const LOCK_END = QUOTE_CREATED + 15 * 60_000;
const LOCK_END_SECOND = LOCK_END / 1000;

const quoteFor = (token: PayToken, overrides: Partial<Quote> = {}): Quote => {
  const priceAtQuote = token.symbol === 'ETH' ? ETH_3000 : undefined;
  const tokenAddress = token.symbol === 'ETH' ? null : token.address.toLowerCase();
  const amount = quoteAmount(token, CENTS, priceAtQuote).toString();
  return {
    quoteId: `q-${token.symbol.toLowerCase()}`,
    token: token.symbol,
    tokenAddress,
    chainId: CHAIN_ID,
    payTo: DEPOSIT,
    amount,
    decimals: token.decimals,
    usd: CENTS / 100,
    rate: rateOf(token, priceAtQuote),
    createdAt: QUOTE_CREATED,
    expiresAt: LOCK_END,
    uri: paymentUri({ chainId: CHAIN_ID, payTo: DEPOSIT, tokenAddress, amount }),
    ...overrides,
  };
};
const usdcQuote = quoteFor(usdc);
const ethQuote = quoteFor(eth);
const USDC_QUOTED = BigInt(usdcQuote.amount);
const ETH_QUOTED = BigInt(ethQuote.amount);

const move = (token: PayToken | string, amount: bigint, overrides: Partial<ValueMove> = {}): ValueMove => ({
  token: typeof token === 'string' ? token : token.address,
  from: BUYER,
  to: DEPOSIT,
  amount: amount.toString(),
  logIndex: 0,
  ...overrides,
});

/** ERC-20 `transfer(to, amount)` call data, as a wallet sends it. */
const transferCall = (to: string, amount: bigint) => `0xa9059cbb${to.slice(2).toLowerCase().padStart(64, '0')}${amount.toString(16).padStart(64, '0')}`;

const BLOCK = 1_000;
const minedTx = (overrides: Partial<MinedTransaction> = {}): MinedTransaction => ({
  hash: `0x${'ab'.repeat(32)}`,
  status: 1,
  from: BUYER,
  to: USDC_ADDRESS.toLowerCase(),
  blockNumber: BLOCK,
  blockTimestamp: RECEIPT_SECOND + 60,
  data: transferCall(DEPOSIT, USDC_QUOTED),
  moves: [move(usdc, USDC_QUOTED)],
  ...overrides,
});

const judge = (overrides: Partial<Omit<JudgeInput, 'receipt'>> & { receipt?: Partial<JudgeInput['receipt']> } = {}) => {
  const { receipt, ...rest } = overrides;
  return judgePayment({
    tx: minedTx(),
    head: BLOCK + 1,
    earlier: {},
    rules: { confirmations: 2, slippageBps: 100 },
    tokens,
    connectedWallet: BUYER,
    pageReport: true,
    ...rest,
    receipt: { createdAt: RECEIPT_CREATED, payTo: DEPOSIT, cents: CENTS, quotes: [usdcQuote], ...receipt },
  });
};

/** A paid ETH transaction straight to the deposit address. */
const ethTx = (amount: bigint, overrides: Partial<MinedTransaction> = {}) =>
  minedTx({ to: DEPOSIT, moves: [move(ZERO_ADDRESS, amount)], ...overrides });

describe('token amounts for a USD total', () => {
  it('counts the stablecoins 1:1 in 6 decimals', () => {
    expect(quoteAmount(usdc, 5_202)).toBe(52_020_000n);
    expect(quoteAmount(usdt, 5_202)).toBe(52_020_000n);
    expect(quoteAmount(usdc, 0)).toBe(0n);
    expect(quoteAmount(usdc, 1)).toBe(10_000n);
    expect(quoteAmount(usdt, 123_456_789)).toBe(1_234_567_890_000n);
  });

  it('converts to ETH at the feed price, exactly when it divides', () => {
    expect(quoteAmount(eth, 5_202, ETH_3000)).toBe(17_340_000_000_000_000n);
    expect(quoteAmount(eth, 5_202, ETH_2601)).toBe(20_000_000_000_000_000n);
    expect(quoteAmount(eth, 0, ETH_3000)).toBe(0n);
  });

  it('rounds the ETH amount up, never below the exact value and never a whole wei above it', () => {
    // 1 USD at 3000 USD/ETH is 333_333_333_333_333.3… wei.
    expect(quoteAmount(eth, 100, ETH_3000)).toBe(333_333_333_333_334n);
    const prices = [ETH_3000, price('3187.12345678'), price('1999.99999999'), price('0.00000001'), price('97531.4')];
    for (const feed of prices) {
      for (const cents of [1, 99, 100, 5_202, 123_457, 9_999_999]) {
        const amount = quoteAmount(eth, cents, feed);
        const exactNumerator = BigInt(cents) * 10n ** 18n * 10n ** BigInt(feed.decimals);
        const perWei = 100n * feed.answer;
        expect(amount * perWei >= exactNumerator).toBe(true);
        expect((amount - 1n) * perWei < exactNumerator).toBe(true);
      }
    }
  });

  it.each([-1, 1.5, 0.1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])('refuses %d cents', (cents) => {
    expect(() => quoteAmount(usdc, cents)).toThrow(RangeError);
    expect(() => quoteAmount(eth, cents, ETH_3000)).toThrow(RangeError);
  });

  it('refuses ETH without a positive price', () => {
    for (const feed of [undefined, { ...ETH_3000, answer: 0n }, { ...ETH_3000, answer: -300_000_000_000n }]) {
      expect(() => quoteAmount(eth, 5_202, feed)).toThrow(RangeError);
    }
  });

  it('tells the display rate: the feed price for ETH, 1 for the stablecoins', () => {
    expect(rateOf(eth, price('3000.5'))).toBe(3000.5);
    expect(rateOf(usdc)).toBe(1);
    expect(rateOf(usdt, ETH_3000)).toBe(1);
  });
});

describe('exact amounts', () => {
  it('asks for the customer total exactly: no tag, nothing below the cent', () => {
    expect(quoteAmount(usdc, 2_801)).toBe(28_010_000n);
    expect(quoteAmount(usdt, 2_801)).toBe(28_010_000n);
    // Every total of a cent grid is a whole number of cents in token units.
    for (const cents of [1, 99, 2_801, 5_202, 123_457]) expect(quoteAmount(usdc, cents) % 10_000n).toBe(0n);
  });
});

describe('payment requests and display', () => {
  it('writes an EIP-681 transfer call for a token', () => {
    expect(paymentUri({ chainId: 8453, payTo: DEPOSIT, tokenAddress: USDC_ADDRESS.toLowerCase(), amount: '52020017' })).toBe(
      `ethereum:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48@8453/transfer?address=${DEPOSIT}&uint256=52020017`,
    );
    expect(usdcQuote.uri).toBe(`ethereum:${USDC_ADDRESS.toLowerCase()}@${CHAIN_ID}/transfer?address=${DEPOSIT}&uint256=${usdcQuote.amount}`);
  });

  it('writes an EIP-681 value transfer for ETH', () => {
    expect(paymentUri({ chainId: 1, payTo: DEPOSIT, tokenAddress: null, amount: '17340005666666661' })).toBe(`ethereum:${DEPOSIT}@1?value=17340005666666661`);
    expect(ethQuote.uri).toBe(`ethereum:${DEPOSIT}@${CHAIN_ID}?value=${ethQuote.amount}`);
  });

  it.each<[string | bigint, number, string]>([
    ['0', 6, '0'],
    [0n, 18, '0'],
    [1n, 6, '0.000001'],
    [1n, 18, '0.000000000000000001'],
    ['52020000', 6, '52.02'],
    ['52020001', 6, '52.020001'],
    ['52000000', 6, '52'],
    [10n ** 18n, 18, '1'],
    ['17300000000000000', 18, '0.0173'],
    ['123456789012345678901', 18, '123.456789012345678901'],
    [1234n, 0, '1234'],
    [-1_500_000n, 6, '-1.5'],
  ])('shows %s with %d decimals as %s', (amount, decimals, shown) => {
    expect(formatUnits(amount, decimals)).toBe(shown);
  });
});

describe('feed staleness', () => {
  const now = 1_700_000_000_000;
  const heartbeat = 3_600_000;
  const at = (updatedAt: number, answer = ETH_3000.answer): FeedPrice => ({ answer, decimals: 8, updatedAt });

  it('accepts an answer up to its heartbeat old and refuses one a millisecond older', () => {
    expect(isStale(at(now), now, heartbeat)).toBe(false);
    expect(isStale(at(now - heartbeat), now, heartbeat)).toBe(false);
    expect(isStale(at(now - heartbeat - 1), now, heartbeat)).toBe(true);
  });

  it('tolerates a minute of clock skew into the future and refuses more', () => {
    expect(isStale(at(now + 60_000), now, heartbeat)).toBe(false);
    expect(isStale(at(now + 60_001), now, heartbeat)).toBe(true);
    expect(isStale(at(now + 86_400_000), now, heartbeat)).toBe(true);
  });

  it('refuses a zero or negative answer however fresh', () => {
    expect(isStale(at(now, 0n), now, heartbeat)).toBe(true);
    expect(isStale(at(now, -1n), now, heartbeat)).toBe(true);
  });

  describe('the aggregator’s bounds', () => {
    // Chainlink's ETH/USD style: 8 decimals, answers held to 10 USD … 100,000 USD.
    const bounds = { min: 1_000_000_000n, max: 10_000_000_000_000n };
    const bounded = (answer: bigint, updatedAt = now): FeedPrice => ({ ...at(updatedAt, answer), bounds });

    it('refuses an answer at or beyond either bound, however fresh', () => {
      for (const answer of [bounds.min, bounds.min - 1n, bounds.max, bounds.max + 1n, 1n]) {
        expect(isStale(bounded(answer), now, heartbeat), String(answer)).toBe(true);
      }
    });

    it('accepts an answer strictly inside them, while it is fresh', () => {
      for (const answer of [bounds.min + 1n, ETH_3000.answer, bounds.max - 1n]) {
        expect(isStale(bounded(answer), now, heartbeat), String(answer)).toBe(false);
      }
      expect(isStale(bounded(ETH_3000.answer, now - heartbeat - 1), now, heartbeat)).toBe(true);
    });

    it('judges a feed that names no bounds by its age and sign alone', () => {
      expect(isStale(at(now, 1n), now, heartbeat)).toBe(false);
      expect(isStale(at(now, 10n ** 30n), now, heartbeat)).toBe(false);
      expect(isStale(at(now, 0n), now, heartbeat)).toBe(true);
    });
  });
});

describe('transaction hashes', () => {
  const hex64 = '0123456789abcdef'.repeat(4);

  it('accepts 0x and 64 hex digits, lower-cased', () => {
    expect(TxHash.parse(`0x${hex64}`)).toBe(`0x${hex64}`);
    expect(TxHash.parse(`0x${hex64.toUpperCase()}`)).toBe(`0x${hex64}`);
    expect(TxHash.parse(`0x${'AbCdEf'.repeat(10)}aBcD`)).toBe(`0x${'abcdef'.repeat(10)}abcd`);
  });

  it.each([
    ['63 digits', `0x${hex64.slice(1)}`],
    ['65 digits', `0x${hex64}0`],
    ['no 0x', hex64],
    ['no 0x, 66 characters', `00${hex64}`],
    ['0X prefix', `0X${hex64}`],
    ['a non-hex digit', `0x${hex64.slice(1)}g`],
    ['a space', ` 0x${hex64}`],
    ['nothing', ''],
  ])('refuses %s', (_label, hash) => {
    expect(TxHash.safeParse(hash).success).toBe(false);
  });
});

describe('judgePayment', () => {
  describe('confirmations', () => {
    it('waits while the block has fewer than the required confirmations', () => {
      expect(judge({ head: BLOCK })).toEqual({ kind: 'unconfirmed', confirmations: 1, required: 2 });
    });

    it('decides once head − block + 1 reaches the requirement', () => {
      expect(judge({ head: BLOCK + 1 })).toMatchObject({ kind: 'paid' });
      expect(judge({ head: BLOCK + 50 })).toMatchObject({ kind: 'paid' });
    });

    it('counts no negative confirmations when the head is behind the block', () => {
      expect(judge({ head: BLOCK - 1 })).toEqual({ kind: 'unconfirmed', confirmations: 0, required: 2 });
      expect(judge({ head: BLOCK - 40 })).toEqual({ kind: 'unconfirmed', confirmations: 0, required: 2 });
    });

    it('waits before judging anything else, a reverted transaction included', () => {
      expect(judge({ head: BLOCK, tx: minedTx({ status: 0, moves: [] }) })).toEqual({ kind: 'unconfirmed', confirmations: 1, required: 2 });
    });

    it('follows the configured requirement', () => {
      const rules = { confirmations: 12, slippageBps: 100 };
      expect(judge({ rules, head: BLOCK + 10 })).toEqual({ kind: 'unconfirmed', confirmations: 11, required: 12 });
      expect(judge({ rules, head: BLOCK + 11 })).toMatchObject({ kind: 'paid' });
    });
  });

  describe('reverted transactions', () => {
    it('records a reverted call to the deposit address (an ETH payment) as reverted', () => {
      expect(judge({ tx: ethTx(ETH_QUOTED, { status: 0, moves: [] }), receipt: { quotes: [ethQuote] } })).toEqual({ kind: 'reverted', own: true });
      expect(judge({ tx: minedTx({ status: 0, to: DEPOSIT.toUpperCase().replace('0X', '0x'), moves: [] }) })).toEqual({ kind: 'reverted', own: true });
    });

    it('records a reverted transfer of a quoted token to the deposit address as reverted, in any case spelling', () => {
      expect(judge({ tx: minedTx({ status: 0, to: USDC_ADDRESS.toLowerCase(), moves: [] }) })).toEqual({ kind: 'reverted', own: true });
      expect(judge({ tx: minedTx({ status: 0, to: USDC_ADDRESS, moves: [] }) })).toEqual({ kind: 'reverted', own: true });
    });

    it('does not count a reverted token call that is not a transfer to the deposit address, or of a token not quoted', () => {
      expect(judge({ tx: minedTx({ status: 0, data: transferCall(STRANGER, USDC_QUOTED), moves: [] }) })).toMatchObject({ kind: 'not_a_payment' });
      expect(judge({ tx: minedTx({ status: 0, data: '0x095ea7b3' + transferCall(DEPOSIT, 1n).slice(10), moves: [] }) })).toMatchObject({ kind: 'not_a_payment' });
      expect(judge({ tx: minedTx({ status: 0, to: USDT_ADDRESS.toLowerCase(), moves: [] }) })).toMatchObject({ kind: 'not_a_payment' });
    });

    it('does not count a reverted payment mined before the receipt was made', () => {
      expect(judge({ tx: minedTx({ status: 0, blockTimestamp: RECEIPT_SECOND - CHAIN_CLOCK_SKEW_SECONDS - 1, moves: [] }) })).toEqual({ kind: 'before_receipt' });
      expect(judge({ tx: minedTx({ status: 0, blockTimestamp: RECEIPT_SECOND - CHAIN_CLOCK_SKEW_SECONDS, moves: [] }) })).toEqual({ kind: 'reverted', own: true });
      expect(judge({ tx: minedTx({ status: 0, blockTimestamp: RECEIPT_SECOND - 2, moves: [] }) })).toEqual({ kind: 'reverted', own: true });
    });

    it('makes a reverted payment the buyer’s own only when the page reported its connected wallet’s transaction', () => {
      const reverted = minedTx({ status: 0, moves: [] });
      expect(judge({ tx: reverted })).toEqual({ kind: 'reverted', own: true });
      expect(judge({ tx: reverted, connectedWallet: BUYER.toUpperCase().replace('0X', '0x') })).toEqual({ kind: 'reverted', own: true });
      // A stranger's reverted transfer to the address (an empty wallet's `transfer(address, 1)`).
      expect(judge({ tx: minedTx({ status: 0, from: STRANGER, moves: [] }) })).toEqual({ kind: 'reverted', own: false });
      // The watcher, a merchant or a card provider reporting, or a page that connected no wallet.
      expect(judge({ tx: reverted, pageReport: false })).toEqual({ kind: 'reverted', own: false });
      expect(judge({ tx: reverted, connectedWallet: undefined })).toEqual({ kind: 'reverted', own: false });
    });

    it('calls a reverted transaction aimed anywhere else not a payment', () => {
      for (const to of [ROUTER, STRANGER, ZERO_ADDRESS, null]) {
        expect(judge({ tx: minedTx({ status: 0, to, moves: [] }) })).toMatchObject({ kind: 'not_a_payment' });
      }
    });
  });

  describe('what the transaction moved', () => {
    it('is not a payment when the quoted token went to another address', () => {
      expect(judge({ tx: minedTx({ moves: [move(usdc, USDC_QUOTED, { to: STRANGER })] }) })).toMatchObject({ kind: 'not_a_payment' });
    });

    it('is not a payment when another token contract sent to the deposit address', () => {
      const lookalike = '0x1111111111111111111111111111111111111111';
      expect(judge({ tx: minedTx({ to: lookalike, moves: [move(lookalike, USDC_QUOTED)] }) })).toMatchObject({ kind: 'not_a_payment' });
    });

    it('is not a payment when a configured but un-quoted token reached the deposit address', () => {
      expect(judge({ tx: minedTx({ to: USDT_ADDRESS, moves: [move(usdt, USDC_QUOTED)] }) })).toMatchObject({ kind: 'not_a_payment' });
      expect(judge({ tx: ethTx(ETH_QUOTED) })).toMatchObject({ kind: 'not_a_payment' });
    });

    it('is not a payment when nothing moved', () => {
      expect(judge({ tx: minedTx({ moves: [] }) })).toMatchObject({ kind: 'not_a_payment' });
    });

    it('matches the deposit address, the token and the payer in any case spelling', () => {
      const tx = minedTx({ moves: [move(USDC_ADDRESS.toUpperCase().replace('0X', '0x'), USDC_QUOTED, { to: DEPOSIT.toUpperCase().replace('0X', '0x'), from: BUYER.toUpperCase().replace('0X', '0x') })] });
      expect(judge({ tx, receipt: { payTo: DEPOSIT.toUpperCase().replace('0X', '0x') } })).toMatchObject({ kind: 'paid', received: USDC_QUOTED, payer: BUYER });
    });
  });

  describe('mined before the receipt', () => {
    it('refuses a block stamped more than the chain’s clock skew before the receipt’s second', () => {
      expect(CHAIN_CLOCK_SKEW_SECONDS).toBe(60);
      expect(judge({ tx: minedTx({ blockTimestamp: RECEIPT_SECOND - CHAIN_CLOCK_SKEW_SECONDS - 1 }) })).toEqual({ kind: 'before_receipt' });
      expect(judge({ tx: minedTx({ blockTimestamp: RECEIPT_SECOND - 3_600 }) })).toEqual({ kind: 'before_receipt' });
    });

    it('accepts a block stamped up to the skew before the receipt: the chain’s clock is not ours (block times are whole seconds)', () => {
      for (const behind of [0, 1, 2, 12, CHAIN_CLOCK_SKEW_SECONDS]) {
        expect(judge({ tx: minedTx({ blockTimestamp: RECEIPT_SECOND - behind }) })).toMatchObject({ kind: 'paid' });
      }
    });
  });

  describe('within the lock', () => {
    it('pays with exactly the quoted amount, nothing overpaid', () => {
      expect(judge()).toEqual({ kind: 'paid', quote: usdcQuote, received: USDC_QUOTED, expected: USDC_QUOTED, overpaid: 0n, payer: BUYER, late: false, own: USDC_QUOTED });
    });

    it('leaves the receipt underpaid one atomic unit short', () => {
      expect(judge({ tx: minedTx({ moves: [move(usdc, USDC_QUOTED - 1n)] }) })).toEqual({
        kind: 'underpaid',
        quote: usdcQuote,
        received: USDC_QUOTED - 1n,
        expected: USDC_QUOTED,
        payer: BUYER,
        own: USDC_QUOTED - 1n,
      });
    });

    it('pays with more and tells the overpayment', () => {
      expect(judge({ tx: minedTx({ moves: [move(usdc, USDC_QUOTED + 1n)] }) })).toMatchObject({ kind: 'paid', received: USDC_QUOTED + 1n, overpaid: 1n });
      expect(judge({ tx: minedTx({ moves: [move(usdc, USDC_QUOTED + 5_000_000n)] }) })).toMatchObject({ kind: 'paid', overpaid: 5_000_000n });
    });

    it('pays in ETH with exactly the quoted wei, and underpays a wei short', () => {
      const receipt = { quotes: [ethQuote] };
      expect(judge({ tx: ethTx(ETH_QUOTED), receipt })).toEqual({ kind: 'paid', quote: ethQuote, received: ETH_QUOTED, expected: ETH_QUOTED, overpaid: 0n, payer: BUYER, late: false, own: ETH_QUOTED });
      expect(judge({ tx: ethTx(ETH_QUOTED - 1n), receipt })).toMatchObject({ kind: 'underpaid', received: ETH_QUOTED - 1n, expected: ETH_QUOTED });
    });

    it('sums several transfers of the token to the deposit address in one transaction, and only those', () => {
      const moves = [
        move(usdc, 50_000_000n, { logIndex: 1 }),
        move(usdc, 9_999_999n, { to: STRANGER, logIndex: 2 }),
        move(usdt, 9_999_999n, { logIndex: 3 }),
        move(usdc, USDC_QUOTED - 50_000_000n, { logIndex: 4 }),
      ];
      expect(judge({ tx: minedTx({ moves }) })).toMatchObject({ kind: 'paid', received: USDC_QUOTED, overpaid: 0n });
      expect(judge({ tx: minedTx({ moves: moves.slice(0, 3) }) })).toMatchObject({ kind: 'underpaid', received: 50_000_000n });
    });

    it('counts what earlier underpayments brought in the same token', () => {
      const earlier = { [USDC_ADDRESS.toLowerCase()]: 52_000_000n };
      // `received` is the running total, `own` only this transaction's part (what its record keeps).
      expect(judge({ earlier, tx: minedTx({ moves: [move(usdc, USDC_QUOTED - 52_000_000n)] }) })).toMatchObject({ kind: 'paid', received: USDC_QUOTED, overpaid: 0n, own: USDC_QUOTED - 52_000_000n });
      expect(judge({ earlier, tx: minedTx({ moves: [move(usdc, USDC_QUOTED - 52_000_001n)] }) })).toMatchObject({ kind: 'underpaid', received: USDC_QUOTED - 1n, own: USDC_QUOTED - 52_000_001n });
    });

    it('does not count earlier underpayments in another token', () => {
      const earlier = { [USDT_ADDRESS.toLowerCase()]: 52_000_000n };
      expect(judge({ earlier, tx: minedTx({ moves: [move(usdc, 20_017n)] }) })).toMatchObject({ kind: 'underpaid', received: 20_017n });
    });

    it('names the Transfer’s sender as the payer, not the transaction’s sender', () => {
      const tx = minedTx({ from: RELAYER, moves: [move(usdc, USDC_QUOTED, { from: BUYER })] });
      expect(judge({ tx })).toMatchObject({ kind: 'paid', payer: BUYER });
    });

    it('names the first sender when several transfers pay', () => {
      const tx = minedTx({ from: RELAYER, moves: [move(usdc, 1n, { from: STRANGER }), move(usdc, USDC_QUOTED - 1n, { from: BUYER, logIndex: 1 })] });
      expect(judge({ tx })).toMatchObject({ kind: 'paid', payer: STRANGER });
    });
  });

  describe('several quotes', () => {
    const olderUsdc = quoteFor(usdc, { createdAt: QUOTE_CREATED });
    const newerEth = quoteFor(eth, { createdAt: QUOTE_CREATED + 30_000, expiresAt: LOCK_END + 30_000 });

    it('judges against the newest quote whose token was moved', () => {
      for (const quotes of [[olderUsdc, newerEth], [newerEth, olderUsdc]]) {
        expect(judge({ receipt: { quotes } })).toMatchObject({ kind: 'paid', quote: olderUsdc, expected: USDC_QUOTED });
        expect(judge({ receipt: { quotes }, tx: ethTx(ETH_QUOTED) })).toMatchObject({ kind: 'paid', quote: newerEth, expected: ETH_QUOTED });
      }
    });

    it('judges against the quote whose exact amount a transfer carries, even when a newer quote exists', () => {
      const tx = minedTx({ moves: [move(usdc, USDC_QUOTED), move(ZERO_ADDRESS, 1n, { logIndex: 1 })] });
      expect(judge({ receipt: { quotes: [olderUsdc, newerEth] }, tx })).toMatchObject({ kind: 'paid', quote: olderUsdc, received: USDC_QUOTED });
      // A quote paid in its last seconds while the page already asked for a new one (another tag).
      const newerUsdc = quoteFor(usdc, { quoteId: 'q-usdc-2', createdAt: QUOTE_CREATED + 60_000, amount: (USDC_QUOTED + 1n).toString() });
      expect(judge({ receipt: { quotes: [newerUsdc, olderUsdc] } })).toMatchObject({ kind: 'paid', quote: olderUsdc, overpaid: 0n });
    });

    it('takes the newest quote of the token received when no quote matches the amount exactly', () => {
      const newerUsdc = quoteFor(usdc, { quoteId: 'q-usdc-2', createdAt: QUOTE_CREATED + 60_000, amount: (USDC_QUOTED + 1n).toString() });
      const odd = minedTx({ moves: [move(usdc, USDC_QUOTED - 5n)] });
      expect(judge({ receipt: { quotes: [newerUsdc, olderUsdc] }, tx: odd })).toMatchObject({ kind: 'underpaid', quote: newerUsdc, expected: USDC_QUOTED + 1n });
      const both = minedTx({ moves: [move(usdc, 7n), move(ZERO_ADDRESS, 1n, { logIndex: 1 })] });
      expect(judge({ receipt: { quotes: [olderUsdc, newerEth] }, tx: both })).toMatchObject({ kind: 'underpaid', quote: newerEth, received: 1n });
    });
  });

  describe('after the lock', () => {
    const late = LOCK_END_SECOND + 1;
    const ethReceipt = { quotes: [ethQuote] };

    it('is still within the lock at a block exactly at its end', () => {
      expect(judge({ tx: ethTx(ETH_QUOTED, { blockTimestamp: LOCK_END_SECOND }), receipt: ethReceipt })).toMatchObject({ kind: 'paid', late: false, expected: ETH_QUOTED });
      expect(judge({ tx: minedTx({ blockTimestamp: LOCK_END_SECOND }) })).toMatchObject({ kind: 'paid', late: false });
    });

    it('is late a second after the end', () => {
      expect(judge({ tx: ethTx(ETH_QUOTED, { blockTimestamp: late }), receipt: ethReceipt })).toMatchObject({ kind: 'slippage' });
      expect(judge({ tx: minedTx({ blockTimestamp: late }) })).toMatchObject({ kind: 'paid', late: true });
    });

    it('still pays a stablecoin payment that covers the quote', () => {
      expect(judge({ tx: minedTx({ blockTimestamp: late }) })).toEqual({ kind: 'paid', quote: usdcQuote, received: USDC_QUOTED, expected: USDC_QUOTED, overpaid: 0n, payer: BUYER, late: true, own: USDC_QUOTED });
      expect(judge({ tx: minedTx({ blockTimestamp: late, moves: [move(usdc, USDC_QUOTED + 3n)] }) })).toMatchObject({ kind: 'paid', overpaid: 3n, late: true });
    });

    it('holds a late stablecoin payment to the whole quote: its price cannot slip', () => {
      expect(USDC_QUOTED).toBe(52_020_000n);
      expect(judge({ tx: minedTx({ blockTimestamp: late, moves: [move(usdc, USDC_QUOTED - 1n)] }) })).toEqual({ kind: 'underpaid', quote: usdcQuote, received: USDC_QUOTED - 1n, expected: USDC_QUOTED, payer: BUYER, own: USDC_QUOTED - 1n });
      expect(judge({ tx: minedTx({ blockTimestamp: late, moves: [move(usdc, 51_499_817n)] }) })).toMatchObject({ kind: 'underpaid' });
    });

    it('rounds the late ETH floor up, in the merchant’s favour', () => {
      // At 2,599.99 USD the current amount is not a multiple of 10,000 wei: the floor is rounded up
      // (and, ETH being cheaper than at the quote, above the quoted amount, so the floor decides).
      const odd = price('2599.99');
      const required = quoteAmount(eth, CENTS, odd);
      const exact = required * 9_900n;
      expect(exact % 10_000n).not.toBe(0n);
      const floor = exact / 10_000n + 1n;
      expect(floor > ETH_QUOTED).toBe(true);
      expect(judge({ tx: ethTx(floor, { blockTimestamp: late }), receipt: ethReceipt, priceNow: odd })).toMatchObject({ kind: 'paid' });
      expect(judge({ tx: ethTx(floor - 1n, { blockTimestamp: late }), receipt: ethReceipt, priceNow: odd })).toMatchObject({ kind: 'slippage' });
    });

    it('pays a late ETH payment of the quoted amount when the price has not moved, nothing overpaid', () => {
      expect(judge({ tx: ethTx(ETH_QUOTED, { blockTimestamp: late }), receipt: ethReceipt, priceNow: ETH_3000 })).toEqual({
        kind: 'paid',
        quote: ethQuote,
        received: ETH_QUOTED,
        // The quote asks more than the current price does (its tag): the quote is what was owed.
        expected: ETH_QUOTED,
        overpaid: 0n,
        payer: BUYER,
        late: true,
        own: ETH_QUOTED,
      });
    });

    it('calls a stranger’s late ETH short of the amount an underpayment, never a failure (1 wei of dust included)', () => {
      for (const paid of [1n, ETH_QUOTED - 1n]) {
        const tx = ethTx(paid, { blockTimestamp: late, from: STRANGER, moves: [move(ZERO_ADDRESS, paid, { from: STRANGER })] });
        expect(judge({ tx, receipt: ethReceipt, priceNow: ETH_3000 })).toMatchObject({ kind: 'underpaid', received: paid, expected: ETH_QUOTED, payer: STRANGER });
        // The page's connected wallet's own short late payment slipped, whoever finds it (the page, the watcher).
        expect(judge({ tx, receipt: ethReceipt, priceNow: ETH_3000, connectedWallet: STRANGER })).toMatchObject({ kind: 'slippage' });
        expect(judge({ tx, receipt: ethReceipt, priceNow: ETH_3000, connectedWallet: STRANGER, pageReport: false })).toMatchObject({ kind: 'slippage' });
        // No wallet connected (paid from the QR code): an underpayment the buyer can still top up.
        expect(judge({ tx, receipt: ethReceipt, priceNow: ETH_3000, connectedWallet: undefined })).toMatchObject({ kind: 'underpaid' });
      }
    });

    it('gives no standing discount after the lock: at an unchanged price, a wei under the quote is slippage', () => {
      const current = quoteAmount(eth, CENTS, ETH_3000);
      const floor = (current * 9_900n + 9_999n) / 10_000n;
      expect(current).toBe(ETH_QUOTED);
      for (const paid of [ETH_QUOTED - 1n, floor]) {
        expect(judge({ tx: ethTx(paid, { blockTimestamp: late }), receipt: ethReceipt, priceNow: ETH_3000 })).toEqual({
          kind: 'slippage',
          quote: ethQuote,
          received: paid,
          expected: ETH_QUOTED,
          payer: BUYER,
          own: paid,
        });
      }
    });

    /**
     * After the lock a late ETH payment must reach the larger of the quoted amount and the floor (the
     * amount at the current price less the tolerance); what it owes in full is the larger of the
     * quote and the current amount, and only what lies above that is overpaid.
     */
    describe.each<[label: string, usd: string]>([
      ['unchanged', '3000'],
      ['3 % dearer', '3090'],
      ['0.5 % cheaper (the floor stays under the quote)', '2985'],
      ['cheaper, exactly 0.02 ETH (the floor passes the quote)', '2601'],
      ['much cheaper', '1500'],
    ])('at a price %s', (_label, usd) => {
      const now = price(usd);
      const current = quoteAmount(eth, CENTS, now);
      const floor = (current * 9_900n + 9_999n) / 10_000n;
      const least = floor > ETH_QUOTED ? floor : ETH_QUOTED;
      const full = current > ETH_QUOTED ? current : ETH_QUOTED;
      const at = (paid: bigint) => judge({ tx: ethTx(paid, { blockTimestamp: late }), receipt: ethReceipt, priceNow: now });

      it('pays from the least amount up, overpaid only past the full amount', () => {
        expect(at(least)).toMatchObject({ kind: 'paid', expected: full, overpaid: 0n, late: true });
        expect(at(full)).toMatchObject({ kind: 'paid', expected: full, overpaid: 0n });
        expect(at(full + 5n)).toMatchObject({ kind: 'paid', expected: full, overpaid: 5n });
      });

      it('calls a wei under the least amount slippage, and never asks less than the quote', () => {
        expect(least >= ETH_QUOTED).toBe(true);
        expect(at(least - 1n)).toMatchObject({ kind: 'slippage', received: least - 1n, expected: full });
        expect(at(ETH_QUOTED - 1n)).toMatchObject({ kind: 'slippage' });
      });
    });

    it('calls a late ETH payment below the current amount less the tolerance slippage', () => {
      const required = quoteAmount(eth, CENTS, ETH_2601);
      expect(required).toBe(20_000_000_000_000_000n);
      expect(judge({ tx: ethTx(ETH_QUOTED, { blockTimestamp: late }), receipt: ethReceipt, priceNow: ETH_2601 })).toEqual({
        kind: 'slippage',
        quote: ethQuote,
        received: ETH_QUOTED,
        expected: required,
        payer: BUYER,
        own: ETH_QUOTED,
      });
    });

    it('pays a late ETH payment exactly at the floor and calls one wei less slippage', () => {
      // 0.02 ETH × (1 − 1 %) = 0.0198 ETH, exact in wei.
      const floor = 19_800_000_000_000_000n;
      const atFloor = judge({ tx: ethTx(floor, { blockTimestamp: late }), receipt: ethReceipt, priceNow: ETH_2601 });
      expect(atFloor).toMatchObject({ kind: 'paid', received: floor, expected: 20_000_000_000_000_000n, payer: BUYER, late: true });
      // The overpayment is measured against the amount at the current price: none here.
      expect(atFloor).toMatchObject({ overpaid: 0n });
      expect(judge({ tx: ethTx(floor - 1n, { blockTimestamp: late }), receipt: ethReceipt, priceNow: ETH_2601 })).toMatchObject({ kind: 'slippage', received: floor - 1n });
    });

    it('follows the configured tolerance', () => {
      const rules = { confirmations: 2, slippageBps: 0 };
      const required = 20_000_000_000_000_000n;
      expect(judge({ rules, tx: ethTx(required, { blockTimestamp: late }), receipt: ethReceipt, priceNow: ETH_2601 })).toMatchObject({ kind: 'paid' });
      expect(judge({ rules, tx: ethTx(required - 1n, { blockTimestamp: late }), receipt: ethReceipt, priceNow: ETH_2601 })).toMatchObject({ kind: 'slippage' });
    });

    it('holds a late ETH payment to the quote when the price rose: dearer ETH lowers the floor, not what was quoted', () => {
      const dearer = price('3500');
      const floor = (quoteAmount(eth, CENTS, dearer) * 9_900n + 9_999n) / 10_000n;
      expect(floor < ETH_QUOTED).toBe(true);
      expect(judge({ tx: ethTx(floor, { blockTimestamp: late }), receipt: ethReceipt, priceNow: dearer })).toMatchObject({ kind: 'slippage', expected: ETH_QUOTED });
      expect(judge({ tx: ethTx(ETH_QUOTED - 1n, { blockTimestamp: late }), receipt: ethReceipt, priceNow: dearer })).toMatchObject({ kind: 'slippage' });
      expect(judge({ tx: ethTx(ETH_QUOTED, { blockTimestamp: late }), receipt: ethReceipt, priceNow: dearer })).toMatchObject({ kind: 'paid', expected: ETH_QUOTED, overpaid: 0n, late: true });
    });

    it('calls a late ETH payment slippage when there is no current price', () => {
      expect(judge({ tx: ethTx(ETH_QUOTED, { blockTimestamp: late }), receipt: ethReceipt })).toEqual({
        kind: 'slippage',
        quote: ethQuote,
        received: ETH_QUOTED,
        expected: ETH_QUOTED,
        payer: BUYER,
        own: ETH_QUOTED,
      });
      expect(judge({ tx: ethTx(ETH_QUOTED * 2n, { blockTimestamp: late }), receipt: ethReceipt })).toMatchObject({ kind: 'slippage' });
    });

    it('calls a late ETH payment slippage when ETH is not a configured token', () => {
      expect(judge({ tx: ethTx(ETH_QUOTED, { blockTimestamp: late }), receipt: ethReceipt, priceNow: ETH_3000, tokens: [usdc, usdt] })).toMatchObject({ kind: 'slippage' });
    });
  });
});
