/**
 * The sandbox card on-ramp: a provider with no card network behind it, for local use and tests. Its
 * hosted page (/onramp/sandbox/{session}) lets a tester pick an outcome; the desk then does what a
 * real provider does: it sends test USDC from a funded account to the split (the chain decides
 * `paid`) and calls the service's webhook route with a signed event, or a signed rejection.
 *
 * Its webhook scheme is Stripe's shape: `Sandbox-Signature: t=<unix s>,v1=<hex HMAC-SHA256 of "<t>.<body>">`,
 * refused outside a tolerance window.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { OnrampSignatureError, SandboxDeliveryError, type OnrampEvent, type OnrampProvider, type SandboxDesk, type SandboxNotice } from '../../ports/onramp';

export const SANDBOX_SIGNATURE_HEADER = 'sandbox-signature';
const DEFAULT_TOLERANCE_S = 300;

export interface SandboxOptions {
  /** The service's own origin: sessions' pages and the webhook route live there. */
  baseUrl: string;
  secret: string;
  /** The funded account that sends the test USDC; without it only rejections can be played. */
  funderKey?: string;
  chain?: { rpcUrl: string; chainId: number };
  toleranceSeconds?: number;
  /** How a signed webhook reaches the service; default an HTTP POST to its webhook route. */
  send?: (body: string, headers: Record<string, string>) => Promise<void>;
  now?: () => number;
}

const Event = z.object({
  id: z.string().min(1).max(200),
  type: z.literal('sandbox.session_updated'),
  created: z.number().int().positive(),
  data: z.object({
    session: z.string().min(1).max(200),
    kind: z.enum(['session_created', 'payment_processing', 'delivered', 'rejected']),
    source_amount_usd: z.number().nonnegative().nullable(),
    transaction_hash: z.string().regex(/^0x[0-9a-fA-F]{64}$/).nullable(),
    code: z.string().max(100).nullable(),
    request_id: z.string().max(200),
  }),
});

const sign = (secret: string, timestamp: number, body: string) => createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');

/** `t=…,v1=…` into its timestamp and signatures; undefined when it is not that shape. */
const parseSignature = (header: string | null) => {
  if (!header) return undefined;
  let timestamp: number | undefined;
  const signatures: Buffer[] = [];
  for (const piece of header.split(',')) {
    const [key, value = ''] = piece.trim().split('=', 2);
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  return timestamp === undefined || signatures.length === 0 ? undefined : { timestamp, signatures };
};

export const sandboxOnramp = (options: SandboxOptions): { provider: OnrampProvider; desk: SandboxDesk } => {
  const now = options.now ?? Date.now;
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_S;
  const webhookUrl = `${options.baseUrl}/api/onramp/sandbox/webhook`;

  const send =
    options.send ??
    (async (body: string, headers: Record<string, string>) => {
      const response = await fetch(webhookUrl, { method: 'POST', body, headers, signal: AbortSignal.timeout(15_000) });
      if (!response.ok) throw new Error(`the service answered the sandbox webhook ${response.status}: ${await response.text()}`);
    });

  const provider: OnrampProvider = {
    name: 'sandbox',
    createSession: async () => {
      const sessionId = `sbx_${randomBytes(12).toString('hex')}`;
      return { sessionId, redirectTo: `${options.baseUrl}/onramp/sandbox/${sessionId}`, clientSecret: null };
    },
    readWebhook: (rawBody, headers, at) => {
      const signature = parseSignature(headers.get(SANDBOX_SIGNATURE_HEADER));
      if (!signature) throw new OnrampSignatureError(`no valid ${SANDBOX_SIGNATURE_HEADER} header`);
      if (Math.abs(at / 1000 - signature.timestamp) > tolerance) throw new OnrampSignatureError('the signature timestamp is outside the tolerance');
      const expected = Buffer.from(sign(options.secret, signature.timestamp, rawBody), 'hex');
      if (!signature.signatures.some((candidate) => timingSafeEqual(candidate, expected))) throw new OnrampSignatureError('the signature does not match the body');
      let json: unknown;
      try {
        json = JSON.parse(rawBody);
      } catch {
        throw new OnrampSignatureError('the signed body is not JSON');
      }
      const parsed = Event.safeParse(json);
      if (!parsed.success) return null;
      const { id, created, data } = parsed.data;
      return {
        provider: 'sandbox',
        eventId: id,
        sessionId: data.session,
        kind: data.kind,
        occurredAt: created * 1000,
        sourceAmountUsd: data.source_amount_usd,
        transactionHash: data.transaction_hash?.toLowerCase() ?? null,
        providerErrorCode: data.code,
        providerRequestId: data.request_id,
      } satisfies OnrampEvent;
    },
  };

  let funder: Promise<{ send(token: string, to: string, amount: string): Promise<string> }> | undefined;
  const loadFunder = () =>
    (funder ??= (async () => {
      if (!options.funderKey || !options.chain) throw new Error('the sandbox has no funded account on a chain (ONRAMP_SANDBOX_FUNDER_KEY, CHAIN_RPC_URL)');
      const [{ Contract }, { createProvider, RelayerSigner }] = await Promise.all([import('ethers'), import('../evm/provider')]);
      const signer = new RelayerSigner(options.funderKey, createProvider(options.chain.rpcUrl, options.chain.chainId));
      return {
        send: async (token: string, to: string, amount: string) => {
          const erc20 = new Contract(token, ['function transfer(address to, uint256 amount) returns (bool)'], signer);
          let hash: string;
          try {
            hash = ((await erc20.getFunction('transfer').send(to, BigInt(amount))) as { hash: string }).hash.toLowerCase();
          } catch (error) {
            throw new SandboxDeliveryError(false, `the sandbox could not send its transfer: ${String(error)}`);
          }
          // Broadcast: whatever happens now, it must not be sent again.
          const mined = await signer.provider!.waitForTransaction(hash, 1).catch(() => null);
          if (!mined || mined.status !== 1) throw new SandboxDeliveryError(true, `the sandbox's transfer ${hash} was not mined`, hash);
          return hash;
        },
      };
    })());

  const desk: SandboxDesk = {
    notify: async (notice: SandboxNotice) => {
      const created = Math.floor(now() / 1000);
      const body = JSON.stringify({
        id: notice.eventId ?? `evt_sbx_${randomBytes(12).toString('hex')}`,
        type: 'sandbox.session_updated',
        created,
        data: {
          session: notice.sessionId,
          kind: notice.kind,
          source_amount_usd: notice.sourceAmountUsd ?? null,
          transaction_hash: notice.transactionHash ?? null,
          code: notice.providerErrorCode ?? null,
          request_id: `req_sbx_${randomBytes(8).toString('hex')}`,
        },
      });
      await send(body, { 'content-type': 'application/json', [SANDBOX_SIGNATURE_HEADER]: `t=${created},v1=${sign(options.secret, created, body)}` });
    },
    deliver: async (token, to, amount) => (await loadFunder()).send(token, to, amount),
  };
  return { provider, desk };
};

/** A sandbox webhook signed with `secret` at `timestamp` (seconds): for tests that forge or replay one. */
export const sandboxSignature = (secret: string, timestamp: number, body: string) => `t=${timestamp},v1=${sign(secret, timestamp, body)}`;
