/**
 * x402 figures for `npm run bench` (alone with BENCH_ONLY=x402), on a local stack started in this
 * process (the Cosmos protocol server, Azurite, anvil with the test tokens and the demo shop):
 * each challenge is checked (a 402 with a v2 PAYMENT-REQUIRED header) by a request before and after
 * its load, and any other status during the load counts as an error;
 * - 402 challenges a second: `POST /api/x402/orders` without a payment header, against
 *   `@x402/express`'s `paymentMiddleware` in an express app on loopback asking for the same payment
 *   (its facilitator is a stub in this process that only lists the supported kind: nothing leaves
 *   the machine, and a challenge needs no facilitator call); then the same on a stack on the memory
 *   store, which leaves out the Cosmos protocol server's share of this process;
 * - proofs checked a second on one core: v2 payment proofs (the protocol's own client, one nonce each)
 *   through what the gate does before a settlement: the header decoded, the envelope and the
 *   authorization's terms checked, then the EIP-712 signature recovered alone (CPU only), and the
 *   settler's `verify` (the signature, plus its reads and simulation on the local chain).
 * Figures to report, not a pass/fail test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import type { FacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme, authorizationTypes } from '@x402/evm';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer, type Network } from '@x402/express';
import { getAddress, hashTypedData, isAddressEqual, recoverAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { AppDeps } from '../../shared/app/deps';
import { ExactEvmPayload, X402_HEADERS, checkAuthorization, type PaymentPayload, type PaymentRequirements } from '../../shared/domain/x402';
import { ANVIL_BUYERS } from '../local/anvil';
import { startLocalStack, type LocalStack } from '../local/stack';
import { close, listen, urlOf } from './loopback';

/** The order every challenge is for: one demo mug. */
const ORDER = { shopSlug: 'demo-coffee', items: [{ sku: 'MUG-CERAMIC', qty: 1 }] };
const ORDER_PATH = '/api/x402/orders';
/** Proofs checked in each verification loop, after a few uncounted ones. */
const PROOFS = 400;
const WARM_UP_PROOFS = 20;
const CHALLENGE_TARGET = 2;
const PROOFS_TARGET = 150;

export interface ChallengeRow {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  /** Answers other than 402, socket errors and timeouts. */
  errors: number;
}

export interface VerifyRow {
  name: string;
  proofs: number;
  /** Proofs a second, wall clock, one async loop. */
  perSecond: number;
  /** Proofs per second of this process's CPU time (user + system). */
  perCpuSecond: number;
  /** Proofs found valid (the signer is the authorization's `from`). */
  valid: number;
}

export interface X402Figures {
  connections: number;
  seconds: number;
  /** The service's challenge on the Cosmos protocol server, then on the memory store. */
  ours: ChallengeRow[];
  express: ChallengeRow;
  /** What the challenge asks, as the service states it. */
  price: { amount: string; asset: string; payTo: string; network: string };
  verify: VerifyRow[];
  notes: string[];
}


/** express ships without types and only this benchmark uses it: the little of it used here. */
interface ExpressApp extends RequestListener {
  use(handler: unknown): void;
  post(path: string, handler: (request: unknown, response: { json(body: unknown): void }) => void): void;
}
const express = require('express') as () => ExpressApp;

const challengeLoad = async (name: string, url: string, connections: number, seconds: number): Promise<ChallengeRow> => {
  // The load runs on a worker thread: the servers share this process, and would otherwise share its core too.
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ORDER),
    connections,
    duration: seconds,
    workers: 1,
  });
  const other = Object.entries(result.statusCodeStats ?? {}).reduce((sum, [code, { count }]) => sum + (code === '402' ? 0 : (count ?? 0)), 0);
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: other + result.errors + result.timeouts };
};

/** One unpaid order: it must be a 402 whose PAYMENT-REQUIRED header decodes to a v2 challenge. */
const probe = async (url: string) => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ORDER) });
  await response.arrayBuffer();
  const header = response.headers.get(X402_HEADERS.paymentRequired);
  if (response.status !== 402 || !header) throw new Error(`${url} answered ${response.status}${header ? '' : ' without a PAYMENT-REQUIRED header'}, not a 402 challenge`);
  const challenge = decodePaymentRequiredHeader(header);
  const requirements = challenge.accepts[0];
  if (challenge.x402Version !== 2 || !requirements) throw new Error(`${url}: the PAYMENT-REQUIRED header holds no v2 requirements`);
  return { challenge, requirements };
};

/** The fields a payer acts on, for comparing two challenges. */
const terms = (requirements: PaymentRequirements) =>
  JSON.stringify({
    scheme: requirements.scheme,
    network: requirements.network,
    asset: requirements.asset.toLowerCase(),
    amount: requirements.amount,
    payTo: requirements.payTo.toLowerCase(),
    maxTimeoutSeconds: requirements.maxTimeoutSeconds,
    extra: requirements.extra,
  });

/**
 * `@x402/express` answering the same challenge. The resource server insists on a facilitator's
 * supported kinds before it answers anything: a stub in this process lists the one kind (exact on
 * this chain) and refuses to verify or settle, which a challenge never asks for.
 */
const startExpress = async (requirements: PaymentRequirements, description: string) => {
  const network = requirements.network as Network;
  let supportedCalls = 0;
  const facilitator: FacilitatorClient = {
    getSupported: async () => {
      supportedCalls++;
      return { kinds: [{ x402Version: 2, scheme: 'exact', network }], extensions: [], signers: {} };
    },
    verify: async () => {
      throw new Error('the benchmark facilitator does not verify');
    },
    settle: async () => {
      throw new Error('the benchmark facilitator does not settle');
    },
  };
  const resourceServer = new x402ResourceServer(facilitator).register(network, new ExactEvmServerScheme());
  const app = express();
  app.use(
    paymentMiddleware(
      {
        [`POST ${ORDER_PATH}`]: {
          accepts: {
            scheme: 'exact',
            network,
            payTo: requirements.payTo,
            price: { amount: requirements.amount, asset: requirements.asset, extra: requirements.extra },
            maxTimeoutSeconds: requirements.maxTimeoutSeconds,
          },
          description,
          mimeType: 'application/json',
        },
      },
      resourceServer,
    ),
  );
  app.post(ORDER_PATH, (_request, response) => response.json({ ok: true }));
  const server = createServer(app);
  await listen(server);
  return { url: `${urlOf(server)}${ORDER_PATH}`, close: () => close(server), supportedCalls: () => supportedCalls };
};

interface Checked {
  payload: PaymentPayload;
  authorization: ExactEvmPayload['authorization'];
  signature: Hex;
}

/**
 * What the gate checks of a v2 proof before any chain is asked: the header decoded and its envelope
 * schema, the accepted terms against ours, the scheme's payload, and the authorization's recipient,
 * amount and validity window. Answers the proof as the gate hands it to the settler.
 */
const checkProof = async (deps: AppDeps, header: string, requirements: PaymentRequirements, payTo: string): Promise<Checked> => {
  const decoded = await deps.x402.decodePayment(header);
  if (!decoded || decoded.x402Version !== 2 || !('accepted' in decoded)) throw new Error('a proof did not decode as v2');
  const { accepted } = decoded;
  if (terms(accepted) !== terms(requirements)) throw new Error('a proof accepted other terms than the challenge');
  const exact = ExactEvmPayload.safeParse(decoded.payload);
  if (!exact.success) throw new Error('a proof carries no exact EVM payload');
  const refusal = checkAuthorization(exact.data.authorization, { payTo, amount: BigInt(requirements.amount), nowSeconds: Math.floor(Date.now() / 1000) });
  if (refusal) throw new Error(`a proof was refused before its signature was checked: ${refusal}`);
  return {
    payload: { x402Version: 2, resource: decoded.resource, accepted: requirements, payload: exact.data },
    authorization: exact.data.authorization,
    signature: exact.data.signature as Hex,
  };
};

/** The EIP-712 recovery the scheme does for an account without code: the TransferWithAuthorization digest, then ecrecover. */
const signatureIsFrom = async (proof: Checked, requirements: PaymentRequirements, chainId: number) => {
  const { from, to, value, validAfter, validBefore, nonce } = proof.authorization;
  const digest = hashTypedData({
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    domain: { name: String(requirements.extra.name), version: String(requirements.extra.version), chainId, verifyingContract: getAddress(requirements.asset) },
    message: { from: from as Hex, to: to as Hex, value: BigInt(value), validAfter: BigInt(validAfter), validBefore: BigInt(validBefore), nonce: nonce as Hex },
  });
  return isAddressEqual(await recoverAddress({ hash: digest, signature: proof.signature }), getAddress(from));
};

/** One async loop over the proofs (warm-up ones first, not counted): wall clock and this process's CPU time. */
const verifyLoop = async (name: string, headers: string[], check: (header: string) => Promise<boolean>): Promise<VerifyRow> => {
  for (const header of headers.slice(0, WARM_UP_PROOFS)) await check(header);
  const measured = headers.slice(WARM_UP_PROOFS);
  let valid = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const header of measured) if (await check(header)) valid++;
  const wallS = (performance.now() - started) / 1000;
  const { user, system } = process.cpuUsage(cpu);
  return { name, proofs: measured.length, perSecond: measured.length / wallS, perCpuSecond: measured.length / ((user + system) / 1e6), valid };
};

type Store = 'cosmos' | 'memory';
const storeName = (store: Store) => (store === 'cosmos' ? 'Cosmos protocol server' : 'memory store');

/** A local stack on its own data folder, on the given store, stopped (and its folder removed) after `use`. */
const withStack = async <T>(store: Store, stackLog: string[], use: (stack: LocalStack) => Promise<T>): Promise<T> => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-x402-'));
  // One client on loopback makes every call: neither the per-address nor the x402 limit is what is measured here.
  const stack = await startLocalStack(
    { ...process.env, STORE: store, PORT: '0', DATA_DIR: dataDir, BASE_URL: '', X402_RATE_LIMIT_PER_MINUTE: '100000000', KEYLESS_RATE_LIMIT_PER_MINUTE: '100000000' },
    (line) => stackLog.push(line),
  );
  try {
    if (!stack.credentials.rpcUrl || !stack.credentials.tokens.USDC) throw new Error('the local stack started no chain (is CHAIN_RPC_URL set?)');
    return await use(stack);
  } finally {
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
};

const orderUrl = (stack: LocalStack) => `${stack.credentials.baseUrl.replace('localhost', '127.0.0.1')}${ORDER_PATH}`;

/** Proofs, one nonce each, from the protocol's own client against the challenge; then the two verification loops. */
const measureProofs = async (stack: LocalStack, challenge: PaymentRequired, requirements: PaymentRequirements, notes: string[]) => {
  const buyer = privateKeyToAccount(ANVIL_BUYERS[0]!.privateKey as Hex);
  const network = requirements.network as Network;
  const client = x402Client.fromConfig({
    schemes: [{ network, client: new ExactEvmScheme(buyer) }],
    spendControls: { allowedAssets: [{ network, asset: requirements.asset, maxAmountPerPayment: requirements.amount }] },
  });
  const headers: string[] = [];
  for (let n = 0; n < WARM_UP_PROOFS + PROOFS; n++) headers.push(encodePaymentSignatureHeader(await client.createPaymentPayload(challenge)));
  const { deps } = stack;
  const { chainId } = stack.credentials;
  const payTo = requirements.payTo.toLowerCase();
  const signatureOnly = await verifyLoop('decode + gate checks + EIP-712 recovery (CPU only)', headers, async (header) =>
    signatureIsFrom(await checkProof(deps, header, requirements, payTo), requirements, chainId),
  );
  const settlerVerify = await verifyLoop("decode + gate checks + the settler's verify (local chain)", headers, async (header) => {
    const proof = await checkProof(deps, header, requirements, payTo);
    const verdict = await deps.settler.verify(proof.payload, requirements);
    return verdict.isValid && verdict.payer?.toLowerCase() === proof.authorization.from.toLowerCase();
  });
  for (const row of [signatureOnly, settlerVerify]) {
    if (row.valid < row.proofs) notes.push(`${row.proofs - row.valid}/${row.proofs} proofs were found invalid by ${row.name}`);
  }
  return [signatureOnly, settlerVerify];
};

export const measureX402 = async (connections: number, seconds: number): Promise<X402Figures> => {
  const stackLog: string[] = [];
  const notes: string[] = [];
  const servers: Array<() => Promise<void>> = [];
  const load = (name: string, url: string) => challengeLoad(name, url, connections, seconds);
  // A second of load first, uncounted: the load thread's start and warm-up would otherwise fall on the measured run.
  const warmUp = (url: string) => challengeLoad('warm-up', url, connections, 1);
  try {
    // 1 and 2 on the Cosmos protocol server, as deployed: the service's challenge, @x402/express asking for the same payment, the proofs.
    const cosmos = await withStack('cosmos', stackLog, async (stack) => {
      const ours = await probe(orderUrl(stack));
      const { requirements } = ours;
      const expressServer = await startExpress(requirements, ours.challenge.resource.description ?? '');
      servers.push(expressServer.close);
      const theirs = await probe(expressServer.url);
      if (terms(theirs.requirements) !== terms(requirements)) {
        notes.push(`the two challenges differ: ours ${terms(requirements)}, @x402/express ${terms(theirs.requirements)}`);
      }
      for (const url of [orderUrl(stack), expressServer.url]) await warmUp(url);
      const oursRow = await load(`POST ${ORDER_PATH}, no payment (ours, ${storeName('cosmos')})`, orderUrl(stack));
      const expressRow = await load('@x402/express paymentMiddleware, same challenge', expressServer.url);
      // Each still answers its challenge after the load.
      await probe(orderUrl(stack));
      await probe(expressServer.url);
      notes.push(
        `@x402/express: its facilitator is a stub in this process answering the supported kinds (exact on ${requirements.network}); asked ${expressServer.supportedCalls()} time(s), never to verify or settle`,
      );
      const verify = await measureProofs(stack, ours.challenge, requirements, notes);
      return { requirements, oursRow, expressRow, verify };
    });
    // 1 again on the memory store: the service's own cost, without the Cosmos protocol server sharing this process.
    const memoryRow = await withStack('memory', stackLog, async (stack) => {
      const { requirements } = await probe(orderUrl(stack));
      if (terms(requirements) !== terms(cosmos.requirements)) notes.push(`the memory store's stack asks otherwise: ${terms(requirements)}`);
      await warmUp(orderUrl(stack));
      const row = await load(`POST ${ORDER_PATH}, no payment (ours, ${storeName('memory')})`, orderUrl(stack));
      await probe(orderUrl(stack));
      return row;
    });

    const errors = stackLog.filter((line) => !line.startsWith('restored '));
    if (errors.length > 0) notes.push(`the stacks logged ${errors.length} line(s), the first: ${errors[0]!.split('\n')[0]}`);
    const { requirements } = cosmos;
    return {
      connections,
      seconds,
      ours: [cosmos.oursRow, memoryRow],
      express: cosmos.expressRow,
      price: { amount: requirements.amount, asset: requirements.asset, payTo: requirements.payTo, network: requirements.network },
      verify: cosmos.verify,
      notes,
    };
  } finally {
    for (const stop of servers) await stop();
  }
};

export const printX402 = (figures: X402Figures) => {
  const { price } = figures;
  console.log(
    `\nx402 challenges, ${figures.connections} connections, ${figures.seconds} s each (load on a worker thread, the servers in this process, one after the other)`,
  );
  console.log(`the challenge: ${price.amount} USDC atomic units (${price.asset}) to ${price.payTo} on ${price.network}, exact`);
  console.log(['scenario'.padEnd(64), 'req/s'.padStart(9), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'vs express'.padStart(11), 'non-402'.padStart(8)].join(''));
  for (const row of [figures.express, ...figures.ours]) {
    console.log(
      [
        row.name.padEnd(64),
        row.rps.toFixed(0).padStart(9),
        row.p50.toFixed(1).padStart(8),
        row.p99.toFixed(1).padStart(8),
        `${(row.rps / figures.express.rps).toFixed(2)}×`.padStart(11),
        String(row.errors).padStart(8),
      ].join(''),
    );
  }
  console.log(`(vs express: req/s over @x402/express's; target ≥ ${CHALLENGE_TARGET}×)`);
  console.log(`\nx402 proofs checked, v2 from @x402/evm's client (one nonce each), one async loop (target ≥ ${PROOFS_TARGET}/s per core)`);
  console.log(['check'.padEnd(58), 'n'.padStart(5), 'proofs/s'.padStart(10), '/CPU-s'.padStart(9), 'valid'.padStart(7)].join(''));
  for (const row of figures.verify) {
    console.log([row.name.padEnd(58), String(row.proofs).padStart(5), row.perSecond.toFixed(0).padStart(10), row.perCpuSecond.toFixed(0).padStart(9), String(row.valid).padStart(7)].join(''));
  }
  console.log(`(/CPU-s: proofs per second of this process's CPU time; the chain's own work, in anvil, is not in it)`);
  for (const note of figures.notes) console.log(`note: ${note}`);
};
