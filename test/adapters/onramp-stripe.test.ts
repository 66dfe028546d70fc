import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StripeWebhookPayloadError, stripeOnramp, stripeOnrampChainIds } from '../../shared/adapters/onramp/stripe';
import { OnrampRefusedError, OnrampSignatureError, type OnrampProvider, type OnrampSessionRequest } from '../../shared/ports/onramp';
import { sessionAt, signStripeWebhook, startStripeFake, stripeEventBody, stripeSessionWebhook, type FakeSession, type StripeFake } from '../support/stripe-fake';

const TEST_KEY = 'sk_test_51FakeOnrampKeyForTheLocalFake';
const LIVE_KEY = 'sk_live_51FakeOnrampKeyForTheLocalFake';
const WEBHOOK_SECRET = 'whsec_fake_onramp_webhook_secret_0123456789';
const SPLIT = '0x2222222222222222222222222222222222222222';

const sessionRequest = (overrides: Partial<OnrampSessionRequest> = {}): OnrampSessionRequest => ({
  receiptId: 'rcpt_8XnQ2',
  quoteId: 'qt_41ZpK',
  walletAddress: SPLIT,
  chainId: 84532,
  tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e',
  destinationAmount: '12.340017',
  destinationAmountAtomic: '12340017',
  customerTotalUsd: 12.87,
  redirectUrl: 'https://shop.example/thanks?order=17',
  customerIp: '203.0.113.9',
  ...overrides,
});

let fake: StripeFake;
let liveFake: StripeFake;

beforeAll(async () => {
  [fake, liveFake] = await Promise.all([startStripeFake({ secretKey: TEST_KEY }), startStripeFake({ secretKey: LIVE_KEY })]);
});
afterAll(async () => {
  await Promise.all([fake?.close(), liveFake?.close()]);
});
beforeEach(() => {
  fake.requests.length = 0;
  liveFake.requests.length = 0;
});

const provider = (options: { secretKey?: string; toleranceSeconds?: number; to?: StripeFake } = {}): OnrampProvider =>
  stripeOnramp({
    secretKey: options.secretKey ?? TEST_KEY,
    webhookSecret: WEBHOOK_SECRET,
    ...(options.to ?? fake).connection,
    ...(options.toleranceSeconds !== undefined && { toleranceSeconds: options.toleranceSeconds }),
  });

describe('Stripe on-ramp: creating a session', () => {
  it("sends the quote's amount, the split's wallet on the chain's network, USDC from USD, the metadata and the buyer's address", async () => {
    const session = await provider().createSession(sessionRequest());

    expect(fake.requests).toHaveLength(1);
    const [sent] = fake.requests;
    expect(sent!.method).toBe('POST');
    expect(sent!.path).toBe('/v1/crypto/onramp_sessions');
    expect(sent!.form).toEqual({
      'wallet_addresses[base_network]': SPLIT,
      lock_wallet_address: 'true',
      'destination_networks[0]': 'base',
      destination_network: 'base',
      'destination_currencies[0]': 'usdc',
      destination_currency: 'usdc',
      destination_amount: '12.340017',
      source_currency: 'usd',
      'metadata[receiptId]': 'rcpt_8XnQ2',
      'metadata[quoteId]': 'qt_41ZpK',
      customer_ip_address: '203.0.113.9',
      redirect_url: 'https://shop.example/thanks?order=17',
    });

    const created = fake.sessions.get(session.sessionId);
    expect(created).toBeDefined();
    expect(session).toEqual({ sessionId: created!.id, redirectTo: created!.redirect_url, clientSecret: created!.client_secret });
    expect(session.sessionId).toMatch(/^cos_[0-9a-f]{24}$/);
    expect(session.redirectTo).toBe(`${fake.origin}/onramp/${session.sessionId}`);
    expect(session.clientSecret).toMatch(new RegExp(`^${session.sessionId}_secret_`));
  });

  it("goes through the SDK: the key as Bearer, the SDK's pinned API version, an idempotency key, a form body", async () => {
    await provider().createSession(sessionRequest());
    const headers = fake.requests[0]!.headers;
    expect(headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    expect(headers['stripe-version']).toBe(Stripe.API_VERSION);
    expect(headers['idempotency-key']).toMatch(/^stripe-node-retry-[0-9a-f-]{36}$/);
    expect(headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(headers['user-agent']).toMatch(/^Stripe\/v1 NodeBindings\//);
  });

  it('leaves out redirect_url and customer_ip_address when the receipt has none', async () => {
    await provider().createSession(sessionRequest({ redirectUrl: null, customerIp: null }));
    const form = fake.requests[0]!.form;
    expect(form).not.toHaveProperty('redirect_url');
    expect(form).not.toHaveProperty('customer_ip_address');
    expect(form['wallet_addresses[base_network]']).toBe(SPLIT);
    expect(form.destination_amount).toBe('12.340017');
  });

  it('names each supported live chain as the on-ramp does', async () => {
    const live = provider({ secretKey: LIVE_KEY, to: liveFake });
    const expected = { 1: ['ethereum', 'ethereum'], 137: ['polygon', 'polygon'], 8453: ['base', 'base_network'], 43114: ['avalanche', 'avalanche'] } as const;
    for (const [chainId, [network, walletKey]] of Object.entries(expected)) {
      liveFake.requests.length = 0;
      await live.createSession(sessionRequest({ chainId: Number(chainId) }));
      const form = liveFake.requests[0]!.form;
      expect(form.destination_network, chainId).toBe(network);
      expect(form['destination_networks[0]'], chainId).toBe(network);
      expect(form[`wallet_addresses[${walletKey}]`], chainId).toBe(SPLIT);
      expect(Object.keys(form).filter((key) => key.startsWith('wallet_addresses[')), chainId).toHaveLength(1);
    }
    expect(stripeOnrampChainIds.sort((a, b) => a - b)).toEqual([1, 137, 8453, 43114, 84532]);
  });

  it('refuses a chain the on-ramp does not serve, before asking Stripe', async () => {
    await expect(provider().createSession(sessionRequest({ chainId: 31337 }))).rejects.toThrow(/does not deliver USDC on chain 31337/);
    await expect(provider().createSession(sessionRequest({ chainId: 11155111 }))).rejects.toThrow(/chain 11155111/);
    expect(fake.requests).toHaveLength(0);
  });

  it("refuses a chain whose mode is not the key's: a live key on Base Sepolia, a test key on Base", async () => {
    await expect(provider({ secretKey: LIVE_KEY, to: liveFake }).createSession(sessionRequest({ chainId: 84532 }))).rejects.toThrow(
      'chain 84532 is a test network but STRIPE_SECRET_KEY is a live-mode key',
    );
    await expect(provider().createSession(sessionRequest({ chainId: 8453 }))).rejects.toThrow('chain 8453 is a live network but STRIPE_SECRET_KEY is a test-mode key');
    expect(fake.requests).toHaveLength(0);
    expect(liveFake.requests).toHaveLength(0);
  });

  it("surfaces Stripe's refusal with its message and code", async () => {
    fake.fail({ status: 400, code: 'crypto_onramp_unsupportable_customer', message: 'This customer is in a region the onramp does not support.' });
    const refused = await provider()
      .createSession(sessionRequest())
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    // A refusal of this request, with Stripe's code, for the service to map (anything else stays the SDK's error).
    expect(refused).toBeInstanceOf(OnrampRefusedError);
    expect(refused).toMatchObject({ message: 'This customer is in a region the onramp does not support.', providerCode: 'crypto_onramp_unsupportable_customer' });
    expect((refused as OnrampRefusedError).providerRequestId).toMatch(/^req_/);
    expect(fake.requests).toHaveLength(1); // a 400 is not retried
  });

  it('retries a 500 as the SDK does, with the same idempotency key, and answers the session', async () => {
    fake.fail({ status: 500, message: 'An unknown error occurred' });
    const session = await provider().createSession(sessionRequest());
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.headers['idempotency-key']).toBe(fake.requests[0]!.headers['idempotency-key']);
    expect(fake.sessions.has(session.sessionId)).toBe(true);
  });

  it("surfaces Stripe's message once every retry of a 500 failed", async () => {
    const failure = { status: 500, message: 'The on-ramp is temporarily unavailable.' };
    fake.fail(failure, failure, failure);
    await expect(provider().createSession(sessionRequest())).rejects.toMatchObject({ message: 'The on-ramp is temporarily unavailable.', statusCode: 500 });
    expect(fake.requests).toHaveLength(3); // the first try and the SDK's two retries
  });

  it('surfaces a key Stripe does not know', async () => {
    await expect(provider({ secretKey: 'sk_test_someone_elses_key' }).createSession(sessionRequest())).rejects.toThrow(/Invalid API Key provided/);
  });

  it('refuses a session Stripe answered without a hosted page', async () => {
    const noPage = await startStripeFake({ secretKey: TEST_KEY, redirectUrl: () => null });
    try {
      await expect(provider({ to: noPage }).createSession(sessionRequest())).rejects.toThrow(/has no redirect_url/);
    } finally {
      await noPage.close();
    }
  });
});

describe('Stripe on-ramp: construction', () => {
  it('takes only Stripe secret or restricted keys', () => {
    for (const secretKey of ['', 'pk_test_abc', 'sk_abc', 'whsec_abc', 'hunter2']) {
      expect(() => stripeOnramp({ secretKey, webhookSecret: WEBHOOK_SECRET }), secretKey).toThrow(/must be a Stripe secret or restricted key/);
    }
    for (const secretKey of ['sk_test_a', 'sk_live_a', 'rk_test_a', 'rk_live_a']) {
      expect(stripeOnramp({ secretKey, webhookSecret: WEBHOOK_SECRET }).name).toBe('stripe');
    }
  });

  it('refuses a tolerance that would switch the timestamp check off, and an empty webhook secret', () => {
    for (const toleranceSeconds of [0, -5, 1.5, Number.NaN]) {
      expect(() => stripeOnramp({ secretKey: TEST_KEY, webhookSecret: WEBHOOK_SECRET, toleranceSeconds }), String(toleranceSeconds)).toThrow(/toleranceSeconds/);
    }
    expect(() => stripeOnramp({ secretKey: TEST_KEY, webhookSecret: ' ' })).toThrow(/STRIPE_WEBHOOK_SECRET/);
  });
});

describe('Stripe on-ramp: webhooks', () => {
  let session: FakeSession;
  const now = () => Date.now();

  beforeAll(async () => {
    const created = await provider().createSession(sessionRequest());
    session = fake.sessions.get(created.sessionId)!;
  });

  it('each session status is its kind, with what the event says', () => {
    const onramp = provider();
    const created = 1_790_000_000;
    const at = created * 1000 + 5_000;
    const read = (status: Parameters<typeof stripeSessionWebhook>[1], requestId?: string | null) => {
      const { body, headers } = stripeSessionWebhook(session, status, { secret: WEBHOOK_SECRET, timestamp: created, created, eventId: `evt_${status}`, requestId });
      return onramp.readWebhook(body, headers, at);
    };
    const common = { provider: 'stripe', sessionId: session.id, occurredAt: created * 1000, providerErrorCode: null };

    expect(read('initialized')).toEqual({ ...common, eventId: 'evt_initialized', kind: 'session_created', sourceAmountUsd: null, transactionHash: null, providerRequestId: session.id });
    expect(read('requires_payment')).toEqual({ ...common, eventId: 'evt_requires_payment', kind: 'session_created', sourceAmountUsd: null, transactionHash: null, providerRequestId: session.id });
    expect(read('fulfillment_processing', 'req_Pr0c3ss')).toEqual({
      ...common,
      eventId: 'evt_fulfillment_processing',
      kind: 'payment_processing',
      sourceAmountUsd: 12.87,
      transactionHash: null,
      providerRequestId: 'req_Pr0c3ss',
    });
    expect(read('fulfillment_complete')).toEqual({
      ...common,
      eventId: 'evt_fulfillment_complete',
      kind: 'delivered',
      sourceAmountUsd: 12.87,
      transactionHash: `0x${'ab'.repeat(32)}`,
      providerRequestId: session.id,
    });
    expect(read('rejected')).toEqual({ ...common, eventId: 'evt_rejected', kind: 'rejected', sourceAmountUsd: null, transactionHash: null, providerRequestId: session.id });
  });

  it("a rejection carries the provider's code when the session names one", () => {
    const { body, headers } = stripeSessionWebhook(session, 'rejected', {
      secret: WEBHOOK_SECRET,
      details: { last_error: { code: 'crypto_onramp_transaction_blocked', message: 'Blocked' } },
    });
    expect(provider().readWebhook(body, headers, now())).toMatchObject({ kind: 'rejected', providerErrorCode: 'crypto_onramp_transaction_blocked' });
  });

  it('states no USD amount when the card paid in another currency, and no hash that is not a transaction hash', () => {
    const { body, headers } = stripeSessionWebhook(session, 'fulfillment_complete', {
      secret: WEBHOOK_SECRET,
      details: { source_amount: '11.80', source_currency: 'eur', transaction_id: 'not-a-hash' },
    });
    expect(provider().readWebhook(body, headers, now())).toMatchObject({ kind: 'delivered', sourceAmountUsd: null, transactionHash: null });
  });

  it('answers null for other event types and for a status it has no use for', () => {
    const onramp = provider();
    const other = signStripeWebhook(stripeEventBody({ id: 'pi_123', object: 'payment_intent', status: 'succeeded' }, { type: 'payment_intent.succeeded' }), WEBHOOK_SECRET);
    expect(onramp.readWebhook(other.body, other.headers, now())).toBeNull();
    const unknown = signStripeWebhook(stripeEventBody({ ...sessionAt(session, 'initialized'), status: 'some_future_status' }), WEBHOOK_SECRET);
    expect(onramp.readWebhook(unknown.body, unknown.headers, now())).toBeNull();
    const inherited = signStripeWebhook(stripeEventBody({ ...sessionAt(session, 'initialized'), status: 'toString' }), WEBHOOK_SECRET);
    expect(onramp.readWebhook(inherited.body, inherited.headers, now())).toBeNull();
  });

  describe('refuses what does not verify', () => {
    const refused = (body: string, headers: Headers, at = now(), onramp = provider()) => {
      let thrown: unknown;
      try {
        onramp.readWebhook(body, headers, at);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(OnrampSignatureError);
      return (thrown as OnrampSignatureError).message;
    };
    const signed = () => stripeSessionWebhook(session, 'fulfillment_complete', { secret: WEBHOOK_SECRET });

    it('a bad signature', () => {
      const { body } = signed();
      const t = Math.floor(Date.now() / 1000);
      expect(refused(body, new Headers({ 'stripe-signature': `t=${t},v1=${'0'.repeat(64)}` }))).toMatch(/No signatures found matching/);
      expect(refused(body, new Headers({ 'stripe-signature': 'garbage' }))).toMatch(/Stripe webhook refused/);
      expect(refused(body, new Headers())).toMatch(/no stripe-signature header/);
    });

    it('a body changed after it was signed', () => {
      const { body, headers } = signed();
      const changed = body.replace(`0x${'Ab'.repeat(32)}`, `0x${'cd'.repeat(32)}`);
      expect(changed).not.toBe(body);
      expect(refused(changed, headers)).toMatch(/No signatures found matching/);
      expect(refused(`${body}\n`, headers)).toMatch(/No signatures found matching/);
      // The untouched body still reads.
      expect(provider().readWebhook(body, headers, now())).toMatchObject({ kind: 'delivered' });
    });

    it('a signature made with another secret', () => {
      const { body, headers } = stripeSessionWebhook(session, 'fulfillment_complete', { secret: 'whsec_someone_else' });
      expect(refused(body, headers)).toMatch(/No signatures found matching/);
    });

    it('a timestamp older than the tolerance', () => {
      const timestamp = 1_790_000_000;
      const { body, headers } = stripeSessionWebhook(session, 'fulfillment_processing', { secret: WEBHOOK_SECRET, timestamp });
      // The default tolerance is the SDK's 300 s: at its edge it reads, a second later it does not.
      expect(provider().readWebhook(body, headers, (timestamp + 300) * 1000)).toMatchObject({ kind: 'payment_processing' });
      expect(refused(body, headers, (timestamp + 301) * 1000)).toMatch(/Timestamp outside the tolerance zone/);
      // A configured tolerance replaces it.
      expect(provider({ toleranceSeconds: 60 }).readWebhook(body, headers, (timestamp + 60) * 1000)).toMatchObject({ kind: 'payment_processing' });
      expect(refused(body, headers, (timestamp + 61) * 1000, provider({ toleranceSeconds: 60 }))).toMatch(/Timestamp outside the tolerance zone/);
    });
  });

  it('a signed body that is not JSON, or not a readable session event, is a payload error, not a forgery', () => {
    const onramp = provider();
    const notJson = signStripeWebhook('{"id": "evt_1", "type": ', WEBHOOK_SECRET);
    expect(() => onramp.readWebhook(notJson.body, notJson.headers, now())).toThrow(StripeWebhookPayloadError);
    expect(() => onramp.readWebhook(notJson.body, notJson.headers, now())).not.toThrow(OnrampSignatureError);

    const noType = signStripeWebhook(JSON.stringify({ id: 'evt_2', data: {} }), WEBHOOK_SECRET);
    expect(() => onramp.readWebhook(noType.body, noType.headers, now())).toThrow(StripeWebhookPayloadError);

    const { status: _status, ...statusless } = sessionAt(session, 'fulfillment_complete');
    const noStatus = signStripeWebhook(stripeEventBody(statusless), WEBHOOK_SECRET);
    expect(() => onramp.readWebhook(noStatus.body, noStatus.headers, now())).toThrow(/crypto.onramp_session_updated event cannot be read/);
  });
});
