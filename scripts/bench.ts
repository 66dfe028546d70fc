/**
 * `npm run bench`: request rate and latency of the service against a bare node:http server that
 * answers a JSON body of the same size (this machine's ceiling), on the memory store and on the
 * Cosmos protocol server, plus the bundled app's import time, payment figures (scripts/bench/payments.ts)
 * x402 figures (scripts/bench/x402.ts) and the payment watcher with many open receipts (scripts/bench/watcher.ts).
 * Figures to report, not a pass/fail test.
 * `npm run bench -- --help` lists the environment knobs.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { UsageError, parseCommandLine, runCli } from './cli';
import { measureInProcess } from './bench/in-process';
import { measurePayments, printPayments } from './bench/payments';
import { measureWatcher, printWatcher } from './bench/watcher';
import { measureX402, printX402 } from './bench/x402';

const root = resolve(__dirname, '..');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 8);
const ONLY = process.env.BENCH_ONLY || undefined;
const WATCHER = {
  receipts: Number(process.env.BENCH_WATCHER_RECEIPTS ?? 10_000),
  shops: Number(process.env.BENCH_WATCHER_SHOPS ?? 100),
  blocks: Number(process.env.BENCH_WATCHER_BLOCKS ?? 10),
};
const ITEMS = 1_000;

const usage = `usage:
  npm run bench
  npm run bench -- --help

Request rate and latency of the service (GET /healthz, a filtered and sorted inventory list of
${ITEMS} items, inventory writes) on the in-memory store and on the embedded Cosmos protocol server,
against a bare node:http server answering a body of the same size (this machine's ceiling); webhook
latency from a status change to the receiver; the in-process cost of one handler call as the Functions
host makes it (inventory page, order pricing); and the import time of the bundled app. Builds dist/
first. Then payments, on a local stack with its anvil chain: a mined USDC payment to paid when its hash
is reported and when only the watcher finds it, paid to the signed webhook, the portal page against a
bare server answering the same page, and the portal script's size gzipped. Then x402, on another
local stack: the 402 challenge of POST /api/x402/orders against @x402/express's paymentMiddleware
answering the same challenge (ours again on the memory store), and payment proofs checked a second on
one core (the signature alone, and the settler's verify on the local chain). Then the payment watcher
with ${WATCHER.receipts} open receipts (a USDC quote each at its own deposit address, 1 in 100 quoted in ETH
too) across ${WATCHER.shops} shops: per mined block with payments in it, the chain calls a run makes (by
method, counted at a proxy in front of anvil), its CPU and wall time, and mined → paid; then mined → paid
with the hash reported. Figures to report, not a pass/fail test; it takes a few minutes.

Environment:
  BENCH_CONNECTIONS   concurrent connections in each load scenario (default 50)
  BENCH_SECONDS       how long each load scenario runs, in seconds (default 8)
  BENCH_ONLY          payments: the payment figures alone (no build, no other scenario);
                      x402: the x402 figures alone (no build, no other scenario);
                      watcher: the watcher figures alone (no build, no other scenario)
  BENCH_WATCHER_RECEIPTS  open receipts the watcher figures start from (default 10000)
  BENCH_WATCHER_SHOPS     shops they belong to, one split each (default 100)
  BENCH_WATCHER_BLOCKS    measured blocks with payments in them (default 10)

Exit status: 0 measured, 1 failed, 2 bad usage.`;

/** The knobs must be positive whole numbers (an unset one takes its default). */
const checkKnobs = () => {
  for (const [name, value] of [
    ['BENCH_CONNECTIONS', CONNECTIONS],
    ['BENCH_SECONDS', DURATION_S],
    ['BENCH_WATCHER_RECEIPTS', WATCHER.receipts],
    ['BENCH_WATCHER_SHOPS', WATCHER.shops],
    ['BENCH_WATCHER_BLOCKS', WATCHER.blocks],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) throw new UsageError(`${name}: must be a whole number of at least 1, not ${JSON.stringify(process.env[name])}`);
  }
  if (ONLY !== undefined && ONLY !== 'payments' && ONLY !== 'x402' && ONLY !== 'watcher') throw new UsageError(`BENCH_ONLY: must be payments, x402 or watcher, not ${JSON.stringify(ONLY)}`);
};
const LIST_PATH = '/api/inventory?category=cat-3&stock=in&sort=priceUsd&order=asc&limit=50';

interface Server {
  url: string;
  apiKey: string;
  child: ChildProcess;
}

const startServer = (mode: string, ...args: string[]) =>
  new Promise<Server>((resolveServer, reject) => {
    const child = spawn('node', ['dist/bench-server.js', mode, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolveServer({ ...JSON.parse(line), child }));
  });

const stopServer = (server: Server) =>
  new Promise<void>((done) => {
    server.child.removeAllListeners('exit');
    server.child.once('exit', () => done());
    server.child.kill('SIGTERM');
  });

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

const load = async (name: string, options: autocannon.Options): Promise<Row> => {
  const result = await autocannon({ connections: CONNECTIONS, duration: DURATION_S, ...options });
  const bad = result.non2xx + result.errors + result.timeouts;
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: bad };
};

const seed = async (server: Server) => {
  const categories = 10;
  for (let start = 0; start < ITEMS; start += 25) {
    await Promise.all(
      Array.from({ length: 25 }, (_, offset) => {
        const n = start + offset;
        return fetch(`${server.url}/api/inventory`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'Ocp-Apim-Subscription-Key': server.apiKey },
          body: JSON.stringify({
            sku: `BENCH-${n}`,
            name: `Benchmark item ${n}`,
            priceUsd: (n % 500) + 0.99,
            stockQty: n % 7,
            category: `cat-${n % categories}`,
            tags: [`t${n % 5}`, `u${n % 3}`],
          }),
        }).then((response) => {
          if (!response.ok) throw new Error(`seeding failed: ${response.status}`);
        });
      }),
    );
  }
};

/** Status change → receiver: 50 receipts × 4 tracking statuses, one after another, over the real queue and trigger. */
const webhookLatency = async (server: Server, events = 200) => {
  const arrivals = new Map<string, number>();
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const { receiptId, status } = JSON.parse(body) as { receiptId: string; status: string };
      arrivals.set(`${receiptId}:${status}`, performance.now());
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const headers = { 'content-type': 'application/json', 'Ocp-Apim-Subscription-Key': server.apiKey };
  const statuses = ['link_opened', 'buyer_logged_in', 'checkout_initialized', 'checkout_success'];
  const sentAt = new Map<string, number>();
  for (let n = 0; n < events / statuses.length; n++) {
    const id = `bench-${Date.now()}-${n}`;
    await fetch(`${server.url}/api/receipts`, { method: 'POST', headers, body: JSON.stringify({ id, lineItems: [{ label: 'x', priceUsd: 1 }], totalUsd: 1, webhook_url: hook }) });
    for (const status of statuses) {
      const response = await fetch(`${server.url}/api/receipts/status`, { method: 'POST', headers, body: JSON.stringify({ id, status }) });
      if (!response.ok) throw new Error(`status change failed: ${response.status}`);
      sentAt.set(`${id}:${status}`, performance.now());
    }
  }
  const until = Date.now() + 60_000;
  while (arrivals.size < sentAt.size && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
  receiver.close();
  const latencies = [...sentAt].filter(([key]) => arrivals.has(key)).map(([key, at]) => arrivals.get(key)! - at).sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { delivered: latencies.length, sent: sentAt.size, p50: at(0.5), p99: at(0.99) };
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const importTime = () => {
  const time = (args: string[]) => {
    const samples: number[] = [];
    for (let n = 0; n < 11; n++) {
      const started = process.hrtime.bigint();
      execFileSync('node', args, { cwd: root, stdio: 'ignore' });
      samples.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    return median(samples);
  };
  return { bare: time(['-e', '0']), bundle: time(['-e', "require('./dist/main.js')"]) };
};

let webhooks: Awaited<ReturnType<typeof webhookLatency>> | undefined;

const main = async () => {
  const { positionals } = parseCommandLine({});
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  checkKnobs();
  if (ONLY === 'payments') return printPayments(await measurePayments(CONNECTIONS, DURATION_S));
  if (ONLY === 'x402') return printX402(await measureX402(CONNECTIONS, DURATION_S));
  if (ONLY === 'watcher') return printWatcher(await measureWatcher(WATCHER, console.log));
  execFileSync('node', ['scripts/build.mjs', '--bench'], { cwd: root, stdio: 'inherit' });
  const rows: Row[] = [];
  const scenarios = async (store: 'memory' | 'cosmos') => {
    const server = await startServer(store);
    try {
      const headers = { 'Ocp-Apim-Subscription-Key': server.apiKey };
      await seed(server);
      const sample = await (await fetch(`${server.url}${LIST_PATH}`, { headers })).text();
      rows.push(await load(`GET /healthz (${store})`, { url: `${server.url}/healthz` }));
      rows.push(await load(`GET /api/inventory, ${ITEMS} items, filter+sort (${store})`, { url: `${server.url}${LIST_PATH}`, headers }));
      rows.push(
        await load(`POST /api/inventory (${store})`, {
          url: `${server.url}/api/inventory`,
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          idReplacement: true,
          body: JSON.stringify({ sku: 'NEW-[<id>]', name: 'Bench write', priceUsd: 9.99, category: 'bench', stockQty: 5 }),
        }),
      );
      if (store === 'memory') webhooks = await webhookLatency(server);
      return sample;
    } finally {
      await stopServer(server);
    }
  };

  const sample = await scenarios('memory');
  const bodyFile = join(mkdtempSync(join(tmpdir(), 'bench-body-')), 'body.json');
  writeFileSync(bodyFile, sample);
  const bare = await startServer('bare', bodyFile);
  const ceiling = await load(`bare node:http, same ${sample.length}-byte body`, { url: bare.url });
  await stopServer(bare);
  rows.unshift(ceiling);
  await scenarios('cosmos');

  const imports = importTime();
  const inProcess = await measureInProcess(ITEMS);
  const payments = await measurePayments(CONNECTIONS, DURATION_S);
  const x402 = await measureX402(CONNECTIONS, DURATION_S);
  const watcher = await measureWatcher(WATCHER);
  console.log(`\n${CONNECTIONS} connections, ${DURATION_S} s each, on ${require('node:os').cpus().length} cores\n`);
  console.log(['scenario'.padEnd(58), 'req/s'.padStart(9), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'vs bare'.padStart(8), 'non-2xx'.padStart(8)].join(''));
  for (const row of rows) {
    console.log(
      [
        row.name.padEnd(58),
        row.rps.toFixed(0).padStart(9),
        row.p50.toFixed(1).padStart(8),
        row.p99.toFixed(1).padStart(8),
        `${((100 * row.rps) / ceiling.rps).toFixed(0)} %`.padStart(8),
        String(row.errors).padStart(8),
      ].join(''),
    );
  }
  if (webhooks) {
    console.log(`\nwebhook latency, status change → receiver (${webhooks.delivered}/${webhooks.sent} events, local stack): p50 ${webhooks.p50.toFixed(0)} ms, p99 ${webhooks.p99.toFixed(0)} ms`);
  }
  console.log(`\nin-process handler call, as the Functions host makes it (new HttpRequest, memory store, median): inventory page ${inProcess.inventoryPage.toFixed(0)} µs, order pricing ${inProcess.orderPricing.toFixed(0)} µs`);
  console.log(`\nimport time (median of 11): node -e 0 ${imports.bare.toFixed(0)} ms; bundled app ${imports.bundle.toFixed(0)} ms (+${(imports.bundle - imports.bare).toFixed(0)} ms)`);
  printPayments(payments);
  printX402(x402);
  printWatcher(watcher);
};

runCli(usage, main, (error) => console.error(error));
