/**
 * The x402 gate: what a paid route's use case calls before it does its work. Without a proof it
 * answers the challenge (402, in the protocol's v1 body and v2 header at once); with one it checks
 * the proof, claims its authorization once, has the settler settle it and lets the use case run. A
 * proof settled before gets the answer it got then, and is not charged again.
 *
 * Each authorization (token, payer, nonce) has one record in `claims`, created before settling: of
 * concurrent requests with the same proof one settles, the others wait for its answer (409 while it
 * runs). A settlement left unfinished (pending, or its settler gone) is finished by the proof's next
 * coming once its lease has passed, from what the chain says of the authorization. No refusal
 * charges anything: every check comes before the settlement, and a settlement that fails moves
 * nothing.
 *
 * Paid means a transaction on chain that carries the token's `Transfer(payer → payTo, value)` of
 * the authorization: the settler's own, or on recovery the one that used the nonce. A nonce that is
 * merely used (the payer cancelled it, or spent it on another authorization mined first) pays
 * nothing: 402 `nonce_used`. The paying transaction is claimed in the payment ledger for what the
 * payment buys before the work runs, so no other receipt can be paid by it.
 */
import { createHash } from 'node:crypto';
import { DomainError } from '../../domain/errors';
import {
  ExactEvmPayload,
  SIGN_IN_WITH_X,
  X402_HEADERS,
  caip2Network,
  SETTLEMENT_MARGIN_SECONDS,
  checkAuthorization,
  paymentProofClaimId,
  refusalOf,
  type PaymentPayload,
  type PaymentPayloadV1,
  type PaymentRefusal,
  type PaymentRequiredV1,
  type PaymentRequiredV2,
  type PaymentRequirements,
  type SettleResult,
} from '../../domain/x402';
import type { Claim } from '../../ports/documents';
import { DependencyUnavailableError } from '../../ports/errors';
import type { AuthorizationOutcome } from '../../ports/x402-protocol';
import { takeClaim } from '../claims';
import { claimPayment } from '../payments/ledger';
import type { AppDeps } from '../deps';
import { withEtagRetry } from '../etag-retry';
import { takeSettlementUnit, type RelayerUnit } from '../relayer-budget';
import { signInWithXChallenge } from './siwx';

/** What a paid call costs and where the money goes. */
export interface PaidResource {
  /** The route's absolute URL: what the proof pays for (a v2 proof names it). */
  resource: string;
  description: string;
  /** Lower-case address the USDC goes to. */
  payTo: string;
  /** USDC atomic units (6 decimals), exactly. */
  amount: bigint;
  /** `signInWithX`: the challenge also offers sign-in-with-x (a wallet proof without payment). */
  extensions?: { signInWithX?: boolean };
  /**
   * What a payment of this resource buys, named in the payment ledger (a receipt's owner), from the
   * proof's key; by default the proof itself.
   */
  ledgerOwner?: (proofKey: string) => string;
}

/**
 * An answer as a use case hands it to its function file, which returns it as the HTTP layer's
 * `Reply` (status, body, headers): the use case layer does not know the HTTP layer.
 */
export interface GateReply {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export type GateOutcome =
  /** 402: the body is the v1 PaymentRequired, the `PAYMENT-REQUIRED` header the v2 one; `error` says why. */
  | { kind: 'challenge'; reply: GateReply }
  /** The proof was settled before: its first 200 answer (body and headers) again; nothing charged. */
  | { kind: 'replay'; reply: GateReply }
  /**
   * Settled: do the work, answer 200 with `responseHeaders` and `rememberAnswer` it. Should a run end
   * without an answer stored, a later replay of the proof is let through again (once the first run
   * has had `ANSWER_LEASE_MS`), with the same `proofKey`: key the work by it.
   */
  | { kind: 'paid'; payer: string; transaction: string; blockNumber: number; network: string; proofKey: string; responseHeaders: Record<string, string> };

/** How long a payer's authorization is asked to stay valid (the client sets `validBefore` from it). */
export const MAX_TIMEOUT_SECONDS = 120;
/** How long the run a settlement let through has to store its answer before a replay may run it again. */
export const ANSWER_LEASE_MS = 60_000;
/** How much further than `MAX_TIMEOUT_SECONDS` a `validBefore` may lie (clocks differ); beyond it the proof is refused. */
export const VALID_BEFORE_SLACK_SECONDS = 10 * 60;
/**
 * How long a settlement may run before the proof's next coming asks the chain how it went (longer
 * than a settler waits for its transaction to be mined).
 */
export const SETTLEMENT_LEASE_MS = 2 * 60_000;
/** A proof's record outlives its authorization by this much, for replays of its answer. */
const RECORD_GRACE_MS = 24 * 60 * 60 * 1000;

/** The record of one authorization: who it paid for, how its settlement went, the answer given. */
interface ProofRecord extends Claim {
  /** `owner`: the resource the proof paid for. The proof's signature, lower-case: a replay is this very proof. */
  signature: string;
  /** What it paid (lower-case recipient, atomic units): a replay must be asked the same. */
  payTo?: string;
  amount?: string;
  /** A hash of the authorization and the resource: a replay must carry the very same. */
  terms?: string;
  state: 'settling' | 'settled' | 'failed';
  /** The settlement's transaction (while settling: the one sent and not yet confirmed). */
  transaction?: string;
  /** Settled: the block of the transaction whose transfer paid it. */
  blockNumber?: number;
  payer?: string;
  network?: string;
  responseHeaders?: Record<string, string>;
  reason?: PaymentRefusal;
  /**
   * While settling: until when its settlement may run before the chain is asked how it went. While
   * settled without an answer: until when the run it let through may still store one.
   */
  leaseUntil?: number;
  answer?: GateReply;
}

type Headers = { get(name: string): string | null };

/** A proof in the v2 form every settler is asked with, and what the gate reads from it. */
interface Proof {
  version: 1 | 2;
  payload: PaymentPayload;
  authorization: ExactEvmPayload['authorization'];
  signature: string;
}

interface Offer {
  requirements: PaymentRequirements;
  /** The chain's name in v1 (its CAIP-2 id where v1 has none). */
  v1Network: string;
  usdc: string;
  challenge(error: PaymentRefusal): Promise<GateOutcome>;
}

const offerFor = async (deps: AppDeps, resource: PaidResource): Promise<Offer> => {
  // Free only as a sign-in offer (the starter plan): nothing is paid, the challenge carries sign-in-with-x.
  if (resource.amount < 0n || (resource.amount === 0n && !resource.extensions?.signInWithX)) throw new Error(`an x402 price must be positive (${resource.resource})`);
  const usdc = deps.settings.tokens.find((token) => token.symbol === 'USDC')?.address.toLowerCase();
  if (!usdc) throw new DependencyUnavailableError('x402', 'x402 payments are in USDC, which this deployment does not configure (USDC_ADDRESS)');
  const network = caip2Network(deps.settings.chainId);
  const [domain, v1Name] = await Promise.all([deps.x402.tokenDomain(usdc), deps.x402.v1Network(deps.settings.chainId)]);
  const v1Network = v1Name ?? network;
  const amount = resource.amount.toString();
  const extra = { name: domain.name, version: domain.version };
  const requirements: PaymentRequirements = { scheme: 'exact', network, asset: usdc, amount, payTo: resource.payTo, maxTimeoutSeconds: MAX_TIMEOUT_SECONDS, extra };
  const mimeType = 'application/json';
  const challenge = async (error: PaymentRefusal): Promise<GateOutcome> => {
    const v1: PaymentRequiredV1 = {
      x402Version: 1,
      error,
      accepts: [
        {
          scheme: 'exact',
          network: v1Network,
          maxAmountRequired: amount,
          resource: resource.resource,
          description: resource.description,
          mimeType,
          payTo: resource.payTo,
          maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
          asset: usdc,
          extra,
        },
      ],
    };
    const v2: PaymentRequiredV2 = {
      x402Version: 2,
      error,
      resource: { url: resource.resource, description: resource.description, mimeType },
      accepts: [requirements],
      ...(resource.extensions?.signInWithX && { extensions: { [SIGN_IN_WITH_X]: await signInWithXChallenge(deps, { resource: resource.resource }) } }),
    };
    return { kind: 'challenge', reply: { status: 402, body: v1, headers: { [X402_HEADERS.paymentRequired]: await deps.x402.encodePaymentRequired(v2) } } };
  };
  return { requirements, v1Network, usdc, challenge };
};

/**
 * The proof a header carries, checked against the offer where the envelope says what it pays
 * (scheme, network, asset, resource, recipient, amount), in the v2 form; or why it is refused.
 */
const readProof = (decoded: PaymentPayload | PaymentPayloadV1, version: 1 | 2, offer: Offer, resource: PaidResource): Proof | PaymentRefusal => {
  const claimed =
    decoded.x402Version === 1 && 'scheme' in decoded
      ? { scheme: decoded.scheme, network: decoded.network, asset: offer.usdc, payTo: resource.payTo, amount: offer.requirements.amount, url: undefined }
      : (() => {
          const { accepted, resource: info } = decoded as PaymentPayload;
          return { scheme: accepted.scheme, network: accepted.network, asset: accepted.asset, payTo: accepted.payTo, amount: accepted.amount, url: info?.url };
        })();
  if (claimed.scheme !== 'exact') return 'unsupported_scheme';
  if (claimed.network !== (version === 1 ? offer.v1Network : offer.requirements.network)) return 'network_mismatch';
  if (claimed.asset.toLowerCase() !== offer.usdc) return 'asset_mismatch';
  if (claimed.url !== undefined && claimed.url !== resource.resource) return 'resource_mismatch';
  if (claimed.payTo.toLowerCase() !== resource.payTo) return 'recipient_mismatch';
  if (claimed.amount !== offer.requirements.amount) return 'amount_mismatch';
  const exact = ExactEvmPayload.safeParse(decoded.payload);
  if (!exact.success) return 'invalid_payment';
  return {
    version,
    // Settled as checked: against our requirements, which it was just found to match, and with the
    // authorization read here only (nothing else in the payload can steer the facilitator elsewhere).
    payload: { x402Version: 2, resource: { url: resource.resource, description: resource.description, mimeType: 'application/json' }, accepted: offer.requirements, payload: exact.data },
    authorization: exact.data.authorization,
    signature: exact.data.signature.toLowerCase(),
  };
};

/** A settler that throws could not be asked, or did not say how the settlement ended: try again later. */
const unavailable = (error: unknown) =>
  error instanceof DependencyUnavailableError || error instanceof DomainError
    ? error
    : new DependencyUnavailableError('x402', `the payment facilitator could not be asked: ${error instanceof Error ? error.message : String(error)}`);

const stillRunning = () => new DomainError('conflict', 'this payment is being settled: send the same proof again shortly for its answer');

/** A hash of what a proof says it pays, and for what: its authorization's fields and the resource. */
const termsOf = (authorization: Proof['authorization'], resource: string) =>
  createHash('sha256')
    .update(
      JSON.stringify([
        authorization.from.toLowerCase(),
        authorization.to.toLowerCase(),
        BigInt(authorization.value).toString(),
        BigInt(authorization.validAfter).toString(),
        BigInt(authorization.validBefore).toString(),
        authorization.nonce.toLowerCase(),
        resource,
      ]),
    )
    .digest('hex');

/** Why a proof whose authorization has a record does not match it (what it pays, or for what); undefined when it does. */
const recordMismatch = (record: ProofRecord, proof: Proof, resource: PaidResource): PaymentRefusal | undefined => {
  if (record.owner !== resource.resource) return 'resource_mismatch';
  // A record written before these were kept: only its stored answer is given again (see answerFromRecord).
  if (record.payTo === undefined || record.amount === undefined || record.terms === undefined) return undefined;
  if (record.payTo !== resource.payTo) return 'recipient_mismatch';
  if (record.amount !== resource.amount.toString()) return 'amount_mismatch';
  if (record.terms !== termsOf(proof.authorization, resource.resource)) return 'invalid_payment';
  return undefined;
};

const paidOutcome = (record: ProofRecord & { transaction: string; blockNumber: number }, proofKey: string): GateOutcome => ({
  kind: 'paid',
  payer: record.payer ?? '',
  transaction: record.transaction,
  blockNumber: record.blockNumber,
  network: record.network ?? '',
  proofKey,
  responseHeaders: record.responseHeaders ?? {},
});

/** A settled record names the transaction that paid it; one that does not (kept before this rule) pays nothing. */
const hasPayment = (record: ProofRecord): record is ProofRecord & { transaction: string; blockNumber: number } =>
  typeof record.transaction === 'string' && /^0x[0-9a-f]{64}$/.test(record.transaction) && typeof record.blockNumber === 'number' && record.blockNumber > 0;

/** What a proof whose authorization has a record gets: its answer again, a wait, or a refusal. */
const answerFromRecord = async (deps: AppDeps, offer: Offer, proof: Proof, resource: PaidResource, id: string): Promise<GateOutcome> => {
  const stored = await deps.claims.get(id, id);
  // Released since (its settler could not be asked): this request is as early as any other.
  if (!stored) throw stillRunning();
  const record = stored.value as ProofRecord;
  if (record.signature !== proof.signature || record.state === 'failed') return offer.challenge('nonce_used');
  // The same signature asked for something else (another resource, recipient or amount, or an authorization changed around it).
  const mismatch = recordMismatch(record, proof, resource);
  if (mismatch) return offer.challenge(mismatch);
  if (record.state === 'settling') {
    if ((record.leaseUntil ?? record.createdAt + SETTLEMENT_LEASE_MS) > deps.clock.now()) throw stillRunning();
    return recoverSettling(deps, offer, proof, resource, id, record, stored.etag);
  }
  if (record.answer) return { kind: 'replay', reply: record.answer };
  // Without its terms kept, a record cannot tell this proof asks what it paid for: no second run;
  // without the paying transaction, nothing was shown to be paid.
  if (record.terms === undefined || !hasPayment(record)) return offer.challenge('nonce_used');
  const now = deps.clock.now();
  if ((record.leaseUntil ?? 0) > now) throw stillRunning();
  // The run it let through left no answer: this replay runs the work again, under the same key.
  const leased: ProofRecord = { ...record, leaseUntil: now + ANSWER_LEASE_MS };
  try {
    await deps.claims.replace(id, leased, stored.etag);
  } catch {
    throw stillRunning();
  }
  return paidOutcome(record, id);
};

const settledHeaders = async (deps: AppDeps, proof: Proof, offer: Offer, settlement: SettleResult): Promise<Record<string, string>> =>
  proof.version === 2
    ? { [X402_HEADERS.responseV2]: await deps.x402.encodePaymentResponse(settlement) }
    : { [X402_HEADERS.responseV1]: await deps.x402.encodePaymentResponse({ ...settlement, network: offer.v1Network }) };

type Payment = { transaction: string; blockNumber: number; logIndex: number };

/**
 * The record of a proof whose payment is on chain, written over `etag`: the proof is paid. Its
 * transaction is claimed in the payment ledger first, for what the resource sells: a transaction
 * reported for a receipt is judged by the same ledger, so this transfer pays nothing else.
 */
const markSettled = async (deps: AppDeps, offer: Offer, proof: Proof, resource: PaidResource, id: string, record: ProofRecord, etag: string, payment: Payment): Promise<GateOutcome> => {
  const transaction = payment.transaction.toLowerCase();
  await claimPayment(deps, deps.settings.chainId, transaction, resource.ledgerOwner?.(id) ?? `x402:${id}`, [payment.logIndex]);
  const settlement: SettleResult = { success: true, transaction, network: offer.requirements.network, payer: proof.authorization.from };
  const settled = {
    ...record,
    state: 'settled' as const,
    transaction,
    blockNumber: payment.blockNumber,
    payer: proof.authorization.from.toLowerCase(),
    network: offer.requirements.network,
    responseHeaders: await settledHeaders(deps, proof, offer, settlement),
    leaseUntil: deps.clock.now() + ANSWER_LEASE_MS,
  };
  // The payment is made whatever happens to this write: the answer goes out, and rememberAnswer records it.
  await deps.claims.replace(id, settled, etag).catch(() => undefined);
  return paidOutcome(settled, id);
};

/** A proof refused for good: its record says why, and the proof is answered so from now on. */
const markFailed = async (deps: AppDeps, offer: Offer, id: string, record: ProofRecord, etag: string, reason: PaymentRefusal, transaction?: string): Promise<GateOutcome> => {
  const failed: ProofRecord = { ...record, state: 'failed', reason, ...(transaction && { transaction: transaction.toLowerCase() }) };
  await deps.claims.replace(id, failed, etag).catch(() => undefined);
  return offer.challenge(reason);
};

/** What the chain says became of the proof's authorization (`hint`: the transaction believed to have used it). */
const outcomeOnChain = (deps: AppDeps, offer: Offer, proof: Proof, resource: PaidResource, hint?: string): Promise<AuthorizationOutcome> => {
  const { from, nonce, value } = proof.authorization;
  return deps.x402.authorizationOutcome(offer.usdc, { from, to: resource.payTo, value, nonce }, hint);
};

/** Settles a proof whose record (`settling`, at `etag`) this request holds, and records how it ended. */
const settleClaimed = async (deps: AppDeps, offer: Offer, proof: Proof, resource: PaidResource, id: string, record: ProofRecord, etag: string): Promise<GateOutcome> => {
  let settlement: SettleResult;
  try {
    settlement = await deps.settler.settle(proof.payload, offer.requirements);
  } catch (error) {
    // How it ended is unknown: the chain tells whether the authorization paid (it is used once at most).
    const outcome = await outcomeOnChain(deps, offer, proof, resource, record.transaction).catch(() => null);
    if (outcome?.state === 'paid') return markSettled(deps, offer, proof, resource, id, record, etag, outcome);
    if (outcome?.state === 'spent') return markFailed(deps, offer, id, record, etag, 'nonce_used');
    if (outcome?.state === 'unused') {
      // Not used: nothing moved, and the proof may come again.
      await deps.claims.delete(id, id, etag).catch(() => undefined);
    } else {
      // The chain could not be asked either: the record stays `settling`, and the proof's next coming asks it.
      const unknown: ProofRecord = { ...record, leaseUntil: deps.clock.now() };
      await deps.claims.replace(id, unknown, etag).catch(() => undefined);
    }
    throw unavailable(error);
  }
  const sent = settlement.transaction ? settlement.transaction.toLowerCase() : undefined;
  if (!settlement.success && settlement.errorReason === 'settlement_pending') return keepPending(deps, id, record, etag, sent);
  // Success or refusal, the chain decides: a settler's word is not a transfer, and a refusal may
  // come after the authorization went through meanwhile (by a settlement before this one).
  let outcome: AuthorizationOutcome;
  try {
    outcome = await outcomeOnChain(deps, offer, proof, resource, sent);
  } catch (error) {
    if (!settlement.success) return markFailed(deps, offer, id, record, etag, refusalOf(settlement.errorReason, 'settlement_failed'), sent);
    // Reported paid, and the chain cannot say yet: asked again on the proof's next coming.
    return keepPending(deps, id, record, etag, sent, error);
  }
  if (outcome.state === 'paid') return markSettled(deps, offer, proof, resource, id, record, etag, outcome);
  if (outcome.state === 'spent') return markFailed(deps, offer, id, record, etag, settlement.success ? 'settlement_failed' : 'nonce_used', sent);
  // Unused: refused, nothing moved; or reported paid by a transaction not mined (yet) where this node sees it.
  if (settlement.success) return keepPending(deps, id, record, etag, sent);
  return markFailed(deps, offer, id, record, etag, refusalOf(settlement.errorReason, 'settlement_failed'), sent);
};

/**
 * Sent, not confirmed yet: the record stays `settling` (409 to the same proof) with its
 * transaction, until its lease ends and the proof's next coming asks the chain how it went.
 */
const keepPending = async (deps: AppDeps, id: string, record: ProofRecord, etag: string, transaction: string | undefined, cause?: unknown): Promise<never> => {
  const pending: ProofRecord = { ...record, leaseUntil: deps.clock.now() + SETTLEMENT_LEASE_MS, ...(transaction && { transaction }) };
  await deps.claims.replace(id, pending, etag).catch(() => undefined);
  if (cause) throw unavailable(cause);
  throw new DependencyUnavailableError('x402', `the payment was sent (${transaction ?? 'no transaction named'}) and is not confirmed yet`);
};

/**
 * A record left `settling` past its lease (its settlement pending, or its run gone): the chain says
 * how it went. Paid: settled, by the transaction whose transfer paid it. Spent without that transfer:
 * refused for good. Not used: settled again while the authorization is valid, else released
 * (nothing moved).
 */
const recoverSettling = async (deps: AppDeps, offer: Offer, proof: Proof, resource: PaidResource, id: string, record: ProofRecord, etag: string): Promise<GateOutcome> => {
  let held: string;
  const taken: ProofRecord = { ...record, leaseUntil: deps.clock.now() + SETTLEMENT_LEASE_MS };
  try {
    held = await deps.claims.replace(id, taken, etag);
  } catch {
    throw stillRunning();
  }
  const outcome = await outcomeOnChain(deps, offer, proof, resource, record.transaction).catch((error: unknown) => {
    throw unavailable(error);
  });
  if (outcome.state === 'paid') return markSettled(deps, offer, proof, resource, id, taken, held, outcome);
  if (outcome.state === 'spent') return markFailed(deps, offer, id, taken, held, 'nonce_used');
  const nowSeconds = Math.floor(deps.clock.now() / 1000);
  if (BigInt(proof.authorization.validBefore) < BigInt(nowSeconds + SETTLEMENT_MARGIN_SECONDS)) {
    await deps.claims.delete(id, id, held).catch(() => undefined);
    return offer.challenge('expired_authorization');
  }
  // Sent again: a settlement of its own, which takes its own unit of the day's budget.
  const unit = await takeSettlementUnit(deps);
  return spentIfSent(deps, unit, id, settleClaimed(deps, offer, proof, resource, id, taken, held));
};

/**
 * Lets a paid call through once its payment is settled, or answers for it: the challenge (402, with
 * the reason in `error`), the earlier answer of a proof settled before, or 409 `conflict` while the
 * same proof is being settled.
 */
export const requirePayment = async (deps: AppDeps, headers: Headers, resource: PaidResource): Promise<GateOutcome> => {
  const offer = await offerFor(deps, resource);
  const v2Header = headers.get(X402_HEADERS.paymentV2);
  const header = v2Header ?? headers.get(X402_HEADERS.paymentV1);
  if (!header) return offer.challenge('payment_required');
  const version = v2Header ? 2 : 1;
  const decoded = await deps.x402.decodePayment(header);
  if (!decoded || decoded.x402Version !== version) return offer.challenge('invalid_payment_header');
  const proof = readProof(decoded, version, offer, resource);
  if (typeof proof === 'string') return offer.challenge(proof);

  const { from, nonce, validBefore } = proof.authorization;
  // What the authorization pays, and to whom, is checked first, replay or not; its validity window only
  // before settling (a replay of a settled proof gets its answer after the authorization expired).
  const refusal = checkAuthorization(proof.authorization, { payTo: resource.payTo, amount: resource.amount, nowSeconds: Math.floor(deps.clock.now() / 1000) });
  if (refusal === 'recipient_mismatch' || refusal === 'amount_mismatch') return offer.challenge(refusal);
  const id = paymentProofClaimId(deps.settings.chainId, offer.usdc, from, nonce);
  if (await deps.claims.get(id, id)) return answerFromRecord(deps, offer, proof, resource, id);

  if (refusal) return offer.challenge(refusal);
  // An authorization valid for far longer than asked: its record would outlive what a store keeps.
  if (BigInt(validBefore) > BigInt(Math.floor(deps.clock.now() / 1000) + MAX_TIMEOUT_SECONDS + VALID_BEFORE_SLACK_SECONDS)) return offer.challenge('invalid_payment');
  // The same proof sent at once may have been settled by another request meanwhile: its nonce is then
  // used, and the facilitator refuses (or fails) to verify it. That request's record answers.
  const verdict = await deps.settler.verify(proof.payload, offer.requirements).catch(async (error: unknown) => {
    if (await deps.claims.get(id, id)) return undefined;
    throw unavailable(error);
  });
  if (!verdict?.isValid && (await deps.claims.get(id, id))) return answerFromRecord(deps, offer, proof, resource, id);
  if (!verdict) throw stillRunning();
  if (!verdict.isValid) return offer.challenge(refusalOf(verdict.invalidReason, 'invalid_payment'));
  // The facilitator recovered the signer: it must be the account the authorization spends from.
  if (verdict.payer?.toLowerCase() !== from.toLowerCase()) return offer.challenge('invalid_signature');

  const now = deps.clock.now();
  const record: ProofRecord = {
    id,
    owner: resource.resource,
    createdAt: now,
    expiresAt: Number(validBefore) * 1000 + RECORD_GRACE_MS,
    signature: proof.signature,
    payTo: resource.payTo,
    amount: resource.amount.toString(),
    terms: termsOf(proof.authorization, resource.resource),
    state: 'settling',
    leaseUntil: now + SETTLEMENT_LEASE_MS,
  };
  // The settlement's gas is the relayer's: a unit of its daily budget (503 once spent), given back if nothing is sent.
  const unit = await takeSettlementUnit(deps);
  const claimed = await takeClaim(deps.claims, record).catch(async (error: unknown) => {
    await unit.giveBack();
    throw error;
  });
  if (!claimed.taken) {
    await unit.giveBack();
    return answerFromRecord(deps, offer, proof, resource, id);
  }
  return spentIfSent(deps, unit, id, settleClaimed(deps, offer, proof, resource, id, record, claimed.etag));
};

/**
 * A settlement's outcome, with its budget unit given back when no transaction can have been sent:
 * its record released (the authorization unused) or failed without a transaction. A settlement that
 * may be on its way (pending, or its end unknown) keeps the unit.
 */
const spentIfSent = async (deps: AppDeps, unit: RelayerUnit, id: string, settling: Promise<GateOutcome>): Promise<GateOutcome> => {
  const giveBackIfUnsent = async () => {
    const record = (await deps.claims.get(id, id))?.value as ProofRecord | undefined;
    if (!record || (record.state === 'failed' && !record.transaction)) await unit.giveBack();
  };
  try {
    const outcome = await settling;
    if (outcome.kind !== 'paid') await giveBackIfUnsent().catch(() => undefined);
    return outcome;
  } catch (error) {
    await giveBackIfUnsent().catch(() => undefined);
    throw error;
  }
};

/**
 * Answer fields that hold a secret. An answer kept for its proof is given to whoever sends that proof
 * again, and the proof is no secret (a remote facilitator sees it): such an answer never holds one.
 */
const SECRET_FIELDS = new Set(['apiKey', 'webhookSecret', 'secret', 'privateKey']);

/** Where a body holds a secret-named field, as dotted paths (none: it may be kept for replays). */
const secretPathsOf = (value: unknown, path = ''): string[] => {
  if (Array.isArray(value)) return value.flatMap((item, index) => secretPathsOf(item, `${path}${index}.`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([name, inner]) => (SECRET_FIELDS.has(name) ? [`${path}${name}`] : secretPathsOf(inner, `${path}${name}.`)));
};

/** A body without its secret-named fields (at any depth). */
const withoutSecrets = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([name]) => !SECRET_FIELDS.has(name)).map(([name, inner]) => [name, withoutSecrets(inner)]));
};

/**
 * A stored answer as it may be given again: records kept before answers were checked for secrets
 * (a subscription's key) lose them here, until those records expire.
 */
export const replayable = (reply: GateReply): GateReply => (secretPathsOf(reply.body).length === 0 ? reply : { ...reply, body: withoutSecrets(reply.body) });

/**
 * The 200 answer remembered for the proof in `headers`, if it was settled and answered before:
 * what a use case gives a resent proof before it checks anything else (a price or stock that
 * changed since concerns new orders, not the one this proof paid for). Undefined otherwise.
 */
export const storedAnswerFor = async (deps: AppDeps, headers: Headers): Promise<GateReply | undefined> => {
  const v2Header = headers.get(X402_HEADERS.paymentV2);
  const header = v2Header ?? headers.get(X402_HEADERS.paymentV1);
  if (!header) return undefined;
  const usdc = deps.settings.tokens.find((token) => token.symbol === 'USDC')?.address.toLowerCase();
  if (!usdc) return undefined;
  const decoded = await deps.x402.decodePayment(header);
  if (!decoded || decoded.x402Version !== (v2Header ? 2 : 1)) return undefined;
  const exact = ExactEvmPayload.safeParse(decoded.payload);
  if (!exact.success) return undefined;
  const { authorization, signature } = exact.data;
  const id = paymentProofClaimId(deps.settings.chainId, usdc, authorization.from, authorization.nonce);
  const stored = await deps.claims.get(id, id);
  const record = stored?.value as ProofRecord | undefined;
  if (!record?.answer || record.state !== 'settled' || record.signature !== signature.toLowerCase()) return undefined;
  // The very authorization it paid with, for the resource it paid for (a record without its terms: by signature only).
  if (record.terms !== undefined && record.terms !== termsOf(authorization, record.owner)) return undefined;
  return replayable(record.answer);
};

/**
 * Stores the answer a replay of a settled proof gets: the caller's 200 without what it showed once.
 * `replay` is that answer, made by the caller; one that holds a secret-named field anywhere (`apiKey`,
 * `webhookSecret`, …) is refused before anything is written, so no secret is kept by mistake.
 */
export const rememberAnswer = (deps: AppDeps, proofKey: string, replay: GateReply): Promise<void> => {
  const secrets = secretPathsOf(replay.body);
  if (secrets.length > 0) return Promise.reject(new Error(`an answer kept for replays may hold no secret (${secrets.join(', ')}): pass the answer without it`));
  return withEtagRetry<void>(
    async ({ write }) => {
      const stored = await deps.claims.get(proofKey, proofKey);
      if (!stored) return;
      const { leaseUntil: _lease, ...record } = stored.value as ProofRecord;
      const answered: ProofRecord = { ...record, state: 'settled', answer: { status: replay.status, body: replay.body, headers: replay.headers } };
      await write(() => deps.claims.replace(proofKey, answered, stored.etag));
    },
    { exhausted: () => undefined },
  );
};
