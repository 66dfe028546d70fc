/**
 * Watcher figures for `npm run bench` (alone with BENCH_ONLY=watcher): the payment watcher with many
 * open receipts, each at its own deposit address with an open USDC quote, every hundredth quoted in
 * ETH too (its address balance-watched). In this process: the embedded Cosmos protocol server, Azurite
 * in memory, anvil with the local contracts, and the app's own dependencies (not the HTTP host): the
 * watcher is run here as the timer runs it (every second, never two at once), so its CPU can be read
 * around each run and no other timer shares the chain or the store. Its chain calls go through a
 * counting proxy on loopback in front of anvil, so they are counted at the transport; the buyers send
 * to anvil directly and are not counted.
 * Each measured block holds a few payments to random open receipts (one in ETH) and some unrelated
 * transfers (to other addresses, and straight into shops' splits, which pay no receipt), mined together.
 * Then, with the timer stopped, payments whose hash is reported as the page reports it: the service's
 * part, from the mined block to `paid`.
 * Figures to report, not a pass/fail test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Contract, NonceManager, Wallet, type JsonRpcProvider } from 'ethers';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { AppDeps } from '../../shared/app/deps';
import { openDeposits } from '../../shared/app/payments/deposits';
import { quoteFor } from '../../shared/app/payments/portal';
import { watchRefunds } from '../../shared/app/payments/refunds';
import { verifyPayment } from '../../shared/app/payments/verify';
import { watchPayments, type WatchReport } from '../../shared/app/payments/watcher';
import { createReceipt } from '../../shared/app/receipts';
import { deploySplit } from '../../shared/app/splits';
import { compose } from '../../shared/composition';
import { LOCAL_GAS_SETTINGS, loadConfig } from '../../shared/config';
import { ReceiptCreateRequest } from '../../shared/domain/receipt-request';
import { ANVIL_ACCOUNTS, ANVIL_BUYERS, ANVIL_RELAYER, startAnvil } from '../local/anvil';
import { deployLocalContracts } from '../local/deploy-contracts';
import { LOCAL_COSMOS_KEY, startCosmosServer, startQueueServer } from '../local/servers';
import { localReceiptSigningKey } from '../local/signing-key';
import { close, listen, urlOf } from './loopback';

/** As the timer's schedule (every second). */
const WATCH_PERIOD_MS = 1_000;
/** Payments (of them, in ETH) and unrelated transfers in each measured block. */
const PAYMENTS_PER_BLOCK = 5;
const ETH_PAYMENTS_PER_BLOCK = 1;
const UNRELATED_TO_OTHERS = 3;
const UNRELATED_INTO_SPLITS = 2;
/** Every this many receipts one is quoted in ETH as well (its address is then balance-watched). */
const ETH_QUOTED_EVERY = 100;
/** Payments whose hash is reported, after a couple of warm-up ones that are not counted. */
const REPORTED = 30;
const REPORTED_WARM_UP = 2;
/** Receipts and quotes made at once while seeding (the store's throughput on loopback, not a limit of the app). */
const SEED_CONCURRENCY = 16;
const WAIT_MS = 15_000;
/** The local platform's payout wallet, as the local stack has it (anvil account 3). */
const LOCAL_PLATFORM = ANVIL_ACCOUNTS[3];

export interface WatcherKnobs {
  receipts: number;
  shops: number;
  blocks: number;
}

/** One watcher run: its wall and CPU time, the chain calls it made by method, and what it found. */
interface Run {
  startedAt: number;
  endedAt: number;
  cpuMs: number;
  calls: Record<string, number>;
  report: WatchReport;
}

/** One reported hash: mined → `paid` answered, the CPU of the call and the chain calls it made by method. */
interface Report {
  ms: number;
  cpuMs: number;
  calls: Record<string, number>;
}

export interface WatcherFigures {
  knobs: WatcherKnobs;
  seed: { splitsMs: number; receiptsMs: number; openQuotes: number; ethQuotes: number; watched: number; balanceWatched: number };
  /** The run that read each measured block. */
  blockRuns: Run[];
  /** Runs that found no new block. */
  idleRuns: Run[];
  /** Mined (the block's mine call returned) → the payment's record written by the watcher, in ms, sorted: all, and the ETH ones. */
  latencies: number[];
  ethLatencies: number[];
  paid: number;
  sent: number;
  /** Payments the block runs matched (a stray transfer into a split matches none). */
  matched: number;
  /** Reported hashes, in the order made. */
  reported: Report[];
  notes: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const at = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const sum = (record: Record<string, number>) => Object.values(record).reduce((a, b) => a + b, 0);

/** A JSON-RPC proxy on loopback that counts each call by method (a batch counts each of its calls). */
const countingProxy = async (target: string) => {
  let counts: Record<string, number> = {};
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const parsed = JSON.parse(body) as { method?: string } | Array<{ method?: string }>;
      for (const call of Array.isArray(parsed) ? parsed : [parsed]) counts[call.method ?? '?'] = (counts[call.method ?? '?'] ?? 0) + 1;
      fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then(async (forwarded) => response.writeHead(forwarded.status, { 'content-type': 'application/json' }).end(await forwarded.text()))
        .catch(() => response.destroy());
    });
  });
  await listen(server);
  return {
    url: urlOf(server),
    /** The calls since the last take. */
    take: () => {
      const taken = counts;
      counts = {};
      return taken;
    },
    close: () => close(server),
  };
};

/** Runs `task` over `items`, `concurrency` at a time. */
const pool = async <T>(items: T[], concurrency: number, task: (item: T) => Promise<void>) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
};

export const measureWatcher = async (knobs: WatcherKnobs, log: (line: string) => void = () => {}): Promise<WatcherFigures> => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-watcher-'));
  const stops: Array<() => Promise<void> | void> = [];
  try {
    const cosmos = await startCosmosServer();
    stops.push(() => cosmos.close());
    const queues = await startQueueServer();
    stops.push(() => queues.close());
    const anvil = await startAnvil();
    stops.push(() => anvil.close());
    const contracts = await deployLocalContracts(anvil.rpcUrl, ANVIL_RELAYER.privateKey);
    const proxy = await countingProxy(anvil.rpcUrl);
    stops.push(() => proxy.close());

    // As the local stack configures itself (scripts/local/stack.ts), with the chain behind the proxy.
    const config = loadConfig({
      APP_ENV: 'development',
      STORE_AUTO_CREATE: 'true',
      BASE_URL: 'http://127.0.0.1:7071',
      ...LOCAL_GAS_SETTINGS,
      COSMOS_ENDPOINT: cosmos.url,
      COSMOS_KEY: LOCAL_COSMOS_KEY,
      AzureWebJobsStorage: queues.connectionString,
      CHAIN_RPC_URL: proxy.url,
      CHAIN_ID: String(anvil.chainId),
      RELAYER_PRIVATE_KEY: ANVIL_RELAYER.privateKey,
      USDC_ADDRESS: contracts.usdc,
      USDT_ADDRESS: contracts.usdt,
      SPLIT_FACTORY_ADDRESS: contracts.splitFactory,
      DEPOSIT_FACTORY_ADDRESS: contracts.depositFactory,
      ETH_USD_FEED_ADDRESS: contracts.ethUsdFeed,
      CHAIN_CONFIRMATIONS: '1',
      PLATFORM_WALLET: LOCAL_PLATFORM.address,
      // Every shop deploys its split here, more than a day's default budget when the knobs say so.
      SPLIT_DEPLOY_DAILY_BUDGET: String(Math.max(200, knobs.shops * 2)),
      RECEIPT_SIGNING_KEY: localReceiptSigningKey(join(dataDir, 'receipt-signing-key.json')),
    });
    const composition = compose(config);
    stops.push(() => composition.dispose());
    await composition.prepare();
    const deps: AppDeps = composition.deps;

    // Shops, each with its split deployed by the relayer (as the portal's first payment would have it).
    let started = performance.now();
    const shops = Array.from({ length: knobs.shops }, () => Wallet.createRandom().address.toLowerCase());
    const splits: string[] = [];
    for (const wallet of shops) {
      const deployed = await deploySplit(deps, wallet);
      if (!deployed.ok) throw new Error(`the split of ${wallet} was not deployed: ${JSON.stringify(deployed)}`);
      splits.push(deployed.split.address.toLowerCase());
    }
    const splitsMs = performance.now() - started;
    log(`watcher: ${knobs.shops} splits deployed in ${(splitsMs / 1000).toFixed(1)} s`);

    // Receipts with an open USDC quote, through the use cases the API and the portal call.
    started = performance.now();
    const open: Array<{ wallet: string; id: string; payTo: string; usdc: bigint; eth?: bigint }> = [];
    const work = Array.from({ length: knobs.receipts }, (_, n) => ({ wallet: shops[n % knobs.shops]!, n }));
    await pool(work, SEED_CONCURRENCY, async ({ wallet, n }) => {
      const id = `bench-watch-${n}`;
      // Totals from 1.00 to 200.00 USD: shops sell different things.
      const totalUsd = (100 + ((n * 7_919) % 19_901)) / 100;
      await createReceipt(deps, { wallet, subscriptionId: null }, ReceiptCreateRequest.parse({ id, lineItems: [{ label: 'Goods', priceUsd: totalUsd }], totalUsd }));
      const usdc = await quoteFor(deps, id, 'USDC');
      // A buyer who looked at USDC and then chose ETH: the same address, now balance-watched too.
      const eth = n % ETH_QUOTED_EVERY === ETH_QUOTED_EVERY / 2 ? await quoteFor(deps, id, 'ETH') : undefined;
      open.push({ wallet, id, payTo: usdc.payTo.toLowerCase(), usdc: BigInt(usdc.amount), ...(eth && { eth: BigInt(eth.amount) }) });
      if (open.length % 1_000 === 0) log(`watcher: ${open.length}/${knobs.receipts} receipts quoted (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    });
    const receiptsMs = performance.now() - started;
    log(`watcher: ${knobs.receipts} receipts quoted in ${(receiptsMs / 1000).toFixed(1)} s`);

    // The buyers send to anvil directly: their calls are not the watcher's.
    const provider: JsonRpcProvider = createProvider(anvil.rpcUrl, anvil.chainId);
    stops.push(() => provider.destroy());
    const signers = ANVIL_BUYERS.map((buyer) => new NonceManager(new Wallet(buyer.privateKey, provider)));
    const buyers = signers.map((signer) => new Contract(contracts.usdc, testUsdcArtifact.abi, signer));
    const notes: string[] = [];

    // The watcher, as the timer runs it: every second, skipped while a run is still going.
    const runs: Run[] = [];
    let running = false;
    let failures = 0;
    proxy.take();
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      proxy.take();
      const cpu = process.cpuUsage();
      const startedAt = Date.now();
      watchPayments(deps, [watchRefunds])
        .then((report) => {
          const used = process.cpuUsage(cpu);
          runs.push({ startedAt, endedAt: Date.now(), cpuMs: (used.user + used.system) / 1000, calls: proxy.take(), report });
        })
        .catch((error: unknown) => {
          failures++;
          if (failures === 1) notes.push(`a watcher run failed: ${error instanceof Error ? error.message : String(error)}`);
        })
        .finally(() => (running = false));
    }, WATCH_PERIOD_MS);
    stops.push(() => clearInterval(timer));

    // The first runs catch up with the seeding's blocks: not measured.
    // (A run that finds no new block has its cursor past the head.)
    const until = Date.now() + WAIT_MS;
    while (!runs.some((run) => run.report.fromBlock === null)) {
      if (Date.now() > until) throw new Error(`the watcher did not catch up with the seeding blocks within ${WAIT_MS / 1000} s`);
      await sleep(50);
    }
    const warmUp = runs.length;

    const latencies: number[] = [];
    const ethLatencies: number[] = [];
    const measuredBlocks = new Set<number>();
    let sent = 0;
    let paid = 0;
    const remaining = [...open];
    const take = (quoted: (receipt: (typeof open)[number]) => boolean) => {
      const candidates = remaining.flatMap((receipt, index) => (quoted(receipt) ? [index] : []));
      const index = candidates[Math.floor(Math.random() * candidates.length)];
      return index === undefined ? undefined : remaining.splice(index, 1)[0]!;
    };
    const reported: Report[] = [];
    const stopWatcher = async () => {
      clearInterval(timer);
      while (running) await sleep(20);
    };
    await provider.send('evm_setAutomine', [false]);
    try {
      for (let block = 0; block < knobs.blocks; block++) {
        // Mined at a random point of the timer's second, not locked to it.
        await sleep(Math.random() * WATCH_PERIOD_MS);
        const inEth = Array.from({ length: ETH_PAYMENTS_PER_BLOCK }, () => take((receipt) => receipt.eth !== undefined)).filter((receipt) => receipt !== undefined);
        const inUsdc = Array.from({ length: PAYMENTS_PER_BLOCK - inEth.length }, () => take(() => true)).filter((receipt) => receipt !== undefined);
        const paying = [...inUsdc, ...inEth];
        const sends: Array<Promise<unknown>> = inUsdc.map((receipt, n) => buyers[n % buyers.length]!.getFunction('transfer')(receipt.payTo, receipt.usdc));
        for (const [n, receipt] of inEth.entries()) sends.push(signers[(inUsdc.length + n) % signers.length]!.sendTransaction({ to: receipt.payTo, value: receipt.eth! }));
        for (let n = 0; n < UNRELATED_TO_OTHERS; n++) sends.push(buyers[n % buyers.length]!.getFunction('transfer')(Wallet.createRandom().address, 1_000_000n + BigInt(n)));
        // Straight into a shop's split, as a buyer copying an old address would: no receipt's payment.
        for (let n = 0; n < UNRELATED_INTO_SPLITS; n++) sends.push(buyers[(n + 2) % buyers.length]!.getFunction('transfer')(splits[Math.floor(Math.random() * splits.length)]!, 1_000_000n * BigInt(n + 1)));
        await Promise.all(sends);
        await provider.send('evm_mine', []);
        const minedAt = Date.now();
        const number = await provider.getBlockNumber();
        measuredBlocks.add(number);
        sent += paying.length;
        const until = Date.now() + WAIT_MS;
        const recorded = new Map<string, number>();
        while (recorded.size < paying.length && Date.now() < until) {
          for (const receipt of paying) {
            if (recorded.has(receipt.id)) continue;
            const stored = await deps.receipts.get(receipt.wallet, receipt.id);
            const record = stored?.value.payments?.find((payment) => payment.blockNumber === number);
            if (record) recorded.set(receipt.id, record.at);
          }
          if (recorded.size < paying.length) await sleep(100);
        }
        paid += recorded.size;
        for (const [id, recordedAt] of recorded) {
          latencies.push(recordedAt - minedAt);
          if (inEth.some((receipt) => receipt.id === id)) ethLatencies.push(recordedAt - minedAt);
        }
        // The run that read the block has ended before the next block is made.
        while (!runs.some((run) => run.report.toBlock !== null && run.report.toBlock >= number) && Date.now() < until) await sleep(20);
      }

      // The hash reported, as the page reports its wallet's answer: the timer is stopped first, so each
      // report decides its payment (no run records it first) and the chain calls counted are its own.
      await stopWatcher();
      for (let n = 0; n < REPORTED_WARM_UP + REPORTED; n++) {
        const receipt = take(() => true);
        if (!receipt) break;
        const tx = (await buyers[n % buyers.length]!.getFunction('transfer')(receipt.payTo, receipt.usdc)) as { hash: string };
        await provider.send('evm_mine', []);
        const minedAt = performance.now();
        proxy.take();
        const cpu = process.cpuUsage();
        const answer = await verifyPayment(deps, receipt.id, tx.hash, { reporter: 'page' });
        const ms = performance.now() - minedAt;
        const used = process.cpuUsage(cpu);
        const calls = proxy.take();
        if (answer.outcome !== 'paid') throw new Error(`the reported hash of ${receipt.id} answered ${JSON.stringify(answer)}`);
        if (n >= REPORTED_WARM_UP) reported.push({ ms, cpuMs: (used.user + used.system) / 1000, calls });
      }
    } finally {
      await stopWatcher();
      await provider.send('evm_setAutomine', [true]);
    }

    const measured = runs.slice(warmUp);
    const blockRuns = measured.filter((run) => run.report.fromBlock !== null && [...measuredBlocks].some((number) => number >= run.report.fromBlock! && number <= run.report.toBlock!));
    const idleRuns = measured.filter((run) => run.report.fromBlock === null);
    if (paid < sent) notes.push(`${sent - paid}/${sent} payments were not recorded by the watcher within ${WAIT_MS / 1000} s`);
    if (failures > 0) notes.push(`${failures} watcher run(s) failed`);
    const matched = blockRuns.reduce((total, run) => total + run.report.matched, 0);
    if (matched !== paid) notes.push(`the block runs matched ${matched} transfers for ${paid} payments recorded`);
    const watched = [...(await openDeposits(deps)).values()];
    return {
      knobs,
      seed: {
        splitsMs,
        receiptsMs,
        openQuotes: open.length,
        ethQuotes: open.filter((receipt) => receipt.eth !== undefined).length,
        watched: watched.length,
        balanceWatched: watched.filter((entry) => entry.eth).length,
      },
      blockRuns,
      idleRuns,
      latencies: sorted(latencies),
      ethLatencies: sorted(ethLatencies),
      paid,
      sent,
      matched,
      reported,
      notes,
    };
  } finally {
    for (const stop of stops.reverse()) await stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
};

const describeCalls = (calls: Array<Record<string, number>>) => {
  const methods = [...new Set(calls.flatMap((record) => Object.keys(record)))].sort();
  return methods.map((method) => `${method} ${at(sorted(calls.map((record) => record[method] ?? 0)), 0.5)}`).join(', ') || 'none';
};

const spread = (samples: number[]) => `n ${samples.length}, p50 ${at(samples, 0.5).toFixed(0)} ms, p99 ${at(samples, 0.99).toFixed(0)} ms, max ${(samples.at(-1) ?? NaN).toFixed(0)} ms`;

export const printWatcher = (figures: WatcherFigures) => {
  const { knobs, seed } = figures;
  console.log(
    `\npayment watcher, ${seed.openQuotes} open receipts at deposit addresses (USDC quotes, ${seed.ethQuotes} quoted in ETH too) across ${knobs.shops} shops, in process (anvil, 1 confirmation; Cosmos protocol server; watcher every second)`,
  );
  console.log(
    `seeding: ${knobs.shops} splits in ${(seed.splitsMs / 1000).toFixed(1)} s; ${seed.openQuotes} receipts with a quote (createReceipt + quoteFor, ${SEED_CONCURRENCY} at a time) in ${(seed.receiptsMs / 1000).toFixed(1)} s; ${seed.watched} addresses watched, ${seed.balanceWatched} of them for ETH`,
  );
  console.log(
    `each block: ${PAYMENTS_PER_BLOCK} payments to random open receipts (${ETH_PAYMENTS_PER_BLOCK} in ETH), ${UNRELATED_TO_OTHERS} transfers to other addresses, ${UNRELATED_INTO_SPLITS} straight into shops' splits (no receipt's)`,
  );
  console.log(['watcher run'.padEnd(40), 'n'.padStart(4), 'RPC calls'.padStart(10), 'CPU p50 ms'.padStart(11), 'CPU p99 ms'.padStart(11), 'wall p50 ms'.padStart(12), 'wall p99 ms'.padStart(12)].join(''));
  for (const [name, runs] of [
    ['with a new block (payments in it)', figures.blockRuns],
    ['idle (no new block)', figures.idleRuns],
  ] as const) {
    const cpu = sorted(runs.map((run) => run.cpuMs));
    const wall = sorted(runs.map((run) => run.endedAt - run.startedAt));
    const calls = sorted(runs.map((run) => sum(run.calls)));
    console.log(
      [name.padEnd(40), String(runs.length).padStart(4), String(at(calls, 0.5)).padStart(10), at(cpu, 0.5).toFixed(1).padStart(11), at(cpu, 0.99).toFixed(1).padStart(11), at(wall, 0.5).toFixed(0).padStart(12), at(wall, 0.99).toFixed(0).padStart(12)].join(''),
    );
    console.log(`  RPC calls by method (median per run): ${describeCalls(runs.map((run) => run.calls))}`);
  }
  console.log(`mined → paid, watcher alone (the payment's record time): ${spread(figures.latencies)} (target p50 ≤ 1 s); the ETH ones: ${spread(figures.ethLatencies)}`);
  const { reported } = figures;
  console.log(
    `mined → paid, hash reported (verifyPayment as the page reports it, timer stopped): ${spread(sorted(reported.map((report) => report.ms)))} (target p50 ≤ 200 ms); CPU p50 ${at(sorted(reported.map((report) => report.cpuMs)), 0.5).toFixed(1)} ms`,
  );
  console.log(`  RPC calls by method (median per report): ${describeCalls(reported.map((report) => report.calls))}`);
  for (const note of figures.notes) console.log(`note: ${note}`);
};
