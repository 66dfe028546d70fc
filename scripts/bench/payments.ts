/**
 * Payment figures for `npm run bench` (alone with BENCH_ONLY=payments), on a local stack started in
 * this process (the Cosmos protocol server, Azurite, anvil with the test tokens and the demo shop):
 * - the mined payment to `paid` when the buyer's page reports the hash (POST /api/portal/{id}/payments);
 * - the same when nothing is reported and the watcher (a timer, every second) finds the transfer;
 * - `paid` to the signed webhook at a receiver on loopback;
 * - the portal page's rate and latency against a bare node:http server answering the same bytes;
 * - the size of the portal's script, as served and gzipped.
 * Figures to report, not a pass/fail test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import { Contract, Wallet, type JsonRpcProvider } from 'ethers';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import { verifyWebhook } from '../../shared/webhook-verify.mjs';
import { ANVIL_ACCOUNTS } from '../local/anvil';
import { startLocalStack } from '../local/stack';
import { close, listen, urlOf } from './loopback';

/** Receipts measured in each timing (after a couple of warm-up ones that are not counted). */
const RECEIPTS = 30;
const WARM_UP = 2;
const TOTAL_USD = 5.25;
/** How often the buyer's page would ask whether its receipt is paid, in the watcher timing. */
const POLL_MS = 20;
/** The watcher runs every second: a payment is made at a random point of that second, not locked to it. */
const WATCH_PERIOD_MS = 1_000;
const WAIT_MS = 15_000;
/** The portal's script budget, gzipped. */
const SCRIPT_BUDGET_GZIP = 60 * 1024;

export interface Timing {
  name: string;
  /** Samples, in ms, sorted. */
  samples: number[];
  target: string;
}

export interface LoadRow {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export interface PaymentFigures {
  timings: Timing[];
  portal: LoadRow;
  bare: LoadRow;
  connections: number;
  seconds: number;
  script: { url: string; bytes: number; gzipBytes: number };
  /** Things worth a look: payments the watcher recorded first, webhooks that did not verify, the stack's own error lines. */
  notes: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const at = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

interface Arrival {
  status: string;
  at: number;
  verified: boolean;
}

/** A webhook receiver on loopback that notes when each receipt's status event arrives, and whether its signature verifies. */
const startReceiver = async (secret: string) => {
  const arrivals = new Map<string, Arrival>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const now = performance.now();
      const body = Buffer.concat(chunks);
      const { receiptId, status } = JSON.parse(body.toString('utf8')) as { receiptId: string; status: string };
      const verified = verifyWebhook({ body, headers: request.headers as IncomingHttpHeaders, secret }).ok;
      if (!arrivals.has(`${receiptId}:${status}`)) arrivals.set(`${receiptId}:${status}`, { status, at: now, verified });
      response.end('ok');
    });
  });
  await listen(server);
  return { url: `${urlOf(server)}/hook`, arrivals, close: () => close(server) };
};


const load = async (name: string, options: autocannon.Options, connections: number, seconds: number): Promise<LoadRow> => {
  // The load runs on a worker thread: the stack shares this process, and would otherwise share its core too.
  const result = await autocannon({ connections, duration: seconds, workers: 1, ...options });
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.non2xx + result.errors + result.timeouts };
};

export const measurePayments = async (connections: number, seconds: number): Promise<PaymentFigures> => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-payments-'));
  const stackLog: string[] = [];
  // One client on loopback makes every call, and the watcher timing asks about one receipt 50 times a second:
  // neither the per-address nor the per-receipt limit is what is measured here.
  const stack = await startLocalStack(
    { ...process.env, PORT: '0', DATA_DIR: dataDir, BASE_URL: '', KEYLESS_RATE_LIMIT_PER_MINUTE: '100000000', PORTAL_RATE_LIMIT_PER_MINUTE: '100000000' },
    (line) => stackLog.push(line),
  );
  let provider: JsonRpcProvider | undefined;
  const servers: Array<() => Promise<void>> = [];
  try {
    const { apiKey, rpcUrl, chainId } = stack.credentials;
    if (!rpcUrl || !stack.credentials.tokens.USDC) throw new Error('the local stack started no chain (is CHAIN_RPC_URL set?)');
    const baseUrl = stack.credentials.baseUrl.replace('localhost', '127.0.0.1');
    provider = createProvider(rpcUrl, chainId);
    const buyer = (n: number) => new Wallet(ANVIL_ACCOUNTS[4 + n]!.privateKey, provider);
    const receiver = await startReceiver(apiKey);
    servers.push(receiver.close);

    const call = async (path: string, body?: unknown, key?: string) => {
      const response = await fetch(`${baseUrl}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'content-type': 'application/json', ...(key && { 'Ocp-Apim-Subscription-Key': key }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const json = (await response.json()) as Record<string, unknown>;
      if (!response.ok) throw new Error(`${body === undefined ? 'GET' : 'POST'} ${path} answered ${response.status}: ${JSON.stringify(json)}`);
      return json;
    };
    let serial = 0;
    const newReceipt = async (webhookUrl?: string) => {
      const id = `bench-pay-${Date.now()}-${++serial}`;
      await call('/api/receipts', { id, lineItems: [{ label: 'Beans', priceUsd: TOTAL_USD }], totalUsd: TOTAL_USD, ...(webhookUrl && { webhook_url: webhookUrl }) }, apiKey);
      return id;
    };
    /** Quotes USDC and pays it from `from`; answers the moment `tx.wait()` returned (the block is mined) and the hash. */
    const quoteAndPay = async (id: string, from: Wallet) => {
      const { quote } = (await call(`/api/portal/${id}/quote`, { token: 'USDC' })) as { quote: { amount: string; payTo: string; tokenAddress: string } };
      const tx = await new Contract(quote.tokenAddress, testUsdcArtifact.abi, from).getFunction('transfer')(quote.payTo, BigInt(quote.amount));
      await tx.wait();
      return { mined: performance.now(), hash: tx.hash as string };
    };
    const notes: string[] = [];

    // 1 and 3: the hash reported, then the signed `paid` webhook (awaited before the next receipt, so each runs alone).
    const reported: number[] = [];
    const webhooks: number[] = [];
    let unverified = 0;
    let recordedFirst = 0;
    let paidId = '';
    for (let n = 0; n < WARM_UP + RECEIPTS; n++) {
      const id = await newReceipt(receiver.url);
      const { mined, hash } = await quoteAndPay(id, buyer(1));
      const answer = await call(`/api/portal/${id}/payments`, { txHash: hash });
      const answered = performance.now();
      if (answer.status !== 'paid') throw new Error(`the payments call answered ${JSON.stringify(answer)}`);
      const until = Date.now() + WAIT_MS;
      while (!receiver.arrivals.has(`${id}:paid`) && Date.now() < until) await sleep(5);
      const arrival = receiver.arrivals.get(`${id}:paid`);
      if (n < WARM_UP) continue;
      // The watcher can get there between the mined block and the call: then the call answers already_recorded.
      if (answer.outcome !== 'paid') recordedFirst++;
      reported.push(answered - mined);
      if (arrival) webhooks.push(arrival.at - answered);
      if (arrival && !arrival.verified) unverified++;
      paidId = id;
    }
    if (recordedFirst > 0) notes.push(`${recordedFirst}/${RECEIPTS} reported payments were recorded by the watcher before the call (outcome already_recorded)`);
    if (webhooks.length < RECEIPTS) notes.push(`${RECEIPTS - webhooks.length}/${RECEIPTS} paid webhooks did not arrive within ${WAIT_MS / 1000} s`);
    if (unverified > 0) notes.push(`${unverified}/${webhooks.length} paid webhooks failed signature verification`);

    // 2: nothing reported; the page polls until the watcher has recorded the payment.
    const watched: number[] = [];
    for (let n = 0; n < WARM_UP + RECEIPTS; n++) {
      const id = await newReceipt();
      await sleep(Math.random() * WATCH_PERIOD_MS);
      const { mined } = await quoteAndPay(id, buyer(2));
      const until = Date.now() + WAIT_MS;
      let paidAt: number | undefined;
      while (paidAt === undefined && Date.now() < until) {
        const view = await call(`/api/portal/${id}`);
        if (view.status === 'paid') paidAt = performance.now();
        else await sleep(POLL_MS);
      }
      if (paidAt === undefined) throw new Error(`the watcher did not record the payment of ${id} within ${WAIT_MS / 1000} s`);
      if (n >= WARM_UP) watched.push(paidAt - mined);
    }

    // 5 (the page's first request also bundles its script when running from source, so it comes before the load).
    const pageUrl = `${baseUrl}/portal/${encodeURIComponent(paidId)}`;
    const page = await fetch(pageUrl);
    const html = Buffer.from(await page.arrayBuffer());
    if (!page.ok) throw new Error(`GET /portal/{id} answered ${page.status}`);
    const src = /<script\b[^>]*\bsrc="([^"]+)"/.exec(html.toString('utf8'))?.[1];
    if (!src) throw new Error('the portal page names no script');
    const scriptUrl = new URL(src.replaceAll('&amp;', '&'), pageUrl).href;
    const scriptResponse = await fetch(scriptUrl);
    if (!scriptResponse.ok) throw new Error(`${scriptUrl} answered ${scriptResponse.status}`);
    const script = Buffer.from(await scriptResponse.arrayBuffer());

    // 4: the page against a bare server answering its bytes with its content type.
    const contentType = page.headers.get('content-type') ?? 'text/html';
    const bareServer = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': contentType });
      response.end(html);
    });
    await listen(bareServer);
    servers.push(() => close(bareServer));
    // A second of load on each first, uncounted: the load thread's start and warm-up would otherwise fall on the first measured.
    for (const url of [urlOf(bareServer), pageUrl]) await load('warm-up', { url }, connections, 1);
    const bare = await load(`bare node:http, same ${html.length}-byte page`, { url: urlOf(bareServer) }, connections, seconds);
    const portal = await load('GET /portal/{id}, paid receipt (Cosmos)', { url: pageUrl }, connections, seconds);

    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    const errors = stackLog.filter((line) => !line.startsWith('restored '));
    if (errors.length > 0) notes.push(`the stack logged ${errors.length} line(s), the first: ${errors[0]!.split('\n')[0]}`);
    return {
      timings: [
        { name: 'mined → paid, hash reported (POST /payments)', samples: sorted(reported), target: 'p50 ≤ 200 ms' },
        { name: 'mined → paid, watcher alone (polled every 20 ms)', samples: sorted(watched), target: 'p50 ≤ 1 s' },
        { name: 'paid answered → signed paid webhook at receiver', samples: sorted(webhooks), target: '' },
      ],
      portal,
      bare,
      connections,
      seconds,
      script: { url: new URL(scriptUrl).pathname, bytes: script.length, gzipBytes: gzipSync(script, { level: 9 }).length },
      notes,
    };
  } finally {
    provider?.destroy();
    for (const stop of servers) await stop();
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
};

export const printPayments = (figures: PaymentFigures) => {
  console.log(`\npayments, local stack in process (anvil, 1 confirmation; Cosmos protocol server; Azurite), USDC, one receipt after another`);
  console.log(['measure'.padEnd(58), 'n'.padStart(4), 'p50 ms'.padStart(9), 'p99 ms'.padStart(9), 'max ms'.padStart(9), '  target'].join(''));
  for (const { name, samples, target } of figures.timings) {
    console.log(
      [name.padEnd(58), String(samples.length).padStart(4), at(samples, 0.5).toFixed(0).padStart(9), at(samples, 0.99).toFixed(0).padStart(9), (samples.at(-1) ?? NaN).toFixed(0).padStart(9), target ? `  ${target}` : ''].join(''),
    );
  }
  console.log(`\nportal page, ${figures.connections} connections, ${figures.seconds} s each (load on a worker thread, server in this process)`);
  console.log(['scenario'.padEnd(58), 'req/s'.padStart(9), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'vs bare'.padStart(8), 'non-2xx'.padStart(8)].join(''));
  for (const row of [figures.bare, figures.portal]) {
    console.log(
      [
        row.name.padEnd(58),
        row.rps.toFixed(0).padStart(9),
        row.p50.toFixed(1).padStart(8),
        row.p99.toFixed(1).padStart(8),
        `${((100 * row.rps) / figures.bare.rps).toFixed(0)} %`.padStart(8),
        String(row.errors).padStart(8),
      ].join(''),
    );
  }
  const { script } = figures;
  console.log(
    `\nportal script ${script.url}: ${script.bytes} bytes, ${script.gzipBytes} gzipped (level 9, ${(script.gzipBytes / 1024).toFixed(1)} KiB; budget ${SCRIPT_BUDGET_GZIP / 1024} KiB gzipped)`,
  );
  for (const note of figures.notes) console.log(`note: ${note}`);
};
