import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** JSON-RPC error answers real providers give to a log query over their limits (code and message as they send them). */
export const RANGE_REFUSALS = {
  alchemy: { code: -32602, message: 'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response.' },
  infura: { code: -32005, message: 'query returned more than 10000 results' },
} as const;

type Request = { jsonrpc?: string; id?: unknown; method?: string; params?: unknown[] };

/**
 * A JSON-RPC proxy in front of a node (the run's anvil), on a free loopback port, that misbehaves as
 * hosted providers do when told to at run time: `capLogs` refuses `eth_getLogs` over more blocks than
 * the cap (with a provider's error), `throttle` answers HTTP 429 to everything (with `Retry-After`
 * or without) for a while, `passThrough` forwards all. `calls` counts requests by method, `refused`
 * the ones it answered itself.
 */
export const startRpcFaults = async (target: string) => {
  let cap: { blocks: number; error: { code: number; message: string } } | undefined;
  let throttled: { until: number; retryAfter?: string } | undefined;
  const calls = new Map<string, number>();
  const refused = new Map<string, number>();
  const count = (into: Map<string, number>, method: string) => into.set(method, (into.get(method) ?? 0) + 1);

  const blockOf = (tag: unknown) => (typeof tag === 'string' && tag.startsWith('0x') ? Number(BigInt(tag)) : undefined);
  /** This proxy's own answer to one request, or undefined to forward it. */
  const refusal = (request: Request) => {
    if (!cap || request.method !== 'eth_getLogs') return undefined;
    const filter = (request.params?.[0] ?? {}) as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown };
    const [from, to] = [blockOf(filter.fromBlock), blockOf(filter.toBlock)];
    // A tag (`latest`) or a block hash is not a number of blocks: refused like an over-wide range when capped.
    if (from !== undefined && to !== undefined && to - from + 1 <= cap.blocks) return undefined;
    count(refused, request.method);
    return { jsonrpc: '2.0', id: request.id ?? null, error: cap.error };
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let parsed: Request | Request[];
        try {
          parsed = JSON.parse(body) as Request | Request[];
        } catch {
          parsed = {};
        }
        const requests = Array.isArray(parsed) ? parsed : [parsed];
        for (const request of requests) count(calls, request.method ?? '?');
        if (throttled && Date.now() < throttled.until) {
          for (const request of requests) count(refused, request.method ?? '?');
          res.writeHead(429, { 'content-type': 'application/json', ...(throttled.retryAfter !== undefined && { 'retry-after': throttled.retryAfter }) });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: 429, message: 'Your app has exceeded its compute units per second capacity.' } }));
          return;
        }
        // Each request of a batch answered by the proxy or by the node, in the batch's order.
        const answers = await Promise.all(
          requests.map(async (request) => {
            const own = refusal(request);
            if (own) return own;
            const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
            return (await upstream.json()) as unknown;
          }),
        );
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
      })().catch((error: unknown) => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(String(error));
      });
    });
  });
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    refused,
    /** `eth_getLogs` over more than `blocks` blocks is refused with `error` (Alchemy's by default). */
    capLogs: (blocks: number, error: { code: number; message: string } = RANGE_REFUSALS.alchemy) => {
      cap = { blocks, error };
    },
    /** Every request answered 429 for `forMs`; `retryAfter`: the header's value (seconds), none when undefined. */
    throttle: (forMs: number, retryAfter?: number) => {
      throttled = { until: Date.now() + forMs, ...(retryAfter !== undefined && { retryAfter: String(retryAfter) }) };
    },
    passThrough: () => {
      cap = undefined;
      throttled = undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
