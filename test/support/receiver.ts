import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, type WebhookVerifyResult } from '../../shared/webhook-verify.mjs';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** The verification helper's answer for this request, when the receiver knows the signing key. */
  verified?: WebhookVerifyResult;
}

export type Behaviour = number | 'hang' | 'redirect';

export interface ReceiverOptions {
  /**
   * The signing key: each request is then checked as a merchant's receiver would check it (the
   * timestamped signature over the raw bytes, within `toleranceMs` of `now`), and one that fails is
   * answered 400 with the reason (the planned behaviours wait for a request that passes).
   */
  secret?: string;
  prefix?: string;
  toleranceMs?: number;
  now?: () => number;
}

/** A webhook receiver on a free loopback port: answers each request by the next behaviour (then 200). */
export const startReceiver = async (behaviours: Behaviour[] = [], options: ReceiverOptions = {}) => {
  const received: Received[] = [];
  const plan = [...behaviours];
  const waiters: Array<() => void> = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const verified =
        options.secret === undefined
          ? undefined
          : verifyWebhook({
              body: bytes,
              headers: request.headers,
              secret: options.secret,
              ...(options.prefix !== undefined && { prefix: options.prefix }),
              ...(options.toleranceMs !== undefined && { toleranceMs: options.toleranceMs }),
              ...(options.now && { now: options.now() }),
            });
      received.push({ headers: request.headers, body: bytes.toString('utf8'), at: Date.now(), ...(verified && { verified }) });
      waiters.splice(0).forEach((wake) => wake());
      if (verified && !verified.ok) {
        response.writeHead(400).end(verified.reason);
        return;
      }
      const behaviour = plan.shift() ?? 200;
      if (behaviour === 'hang') return; // never answers
      if (behaviour === 'redirect') {
        response.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end();
        return;
      }
      response.writeHead(behaviour).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    /** Resolves once `count` requests have arrived (or rejects after `ms`). */
    waitFor: async (count: number, ms = 15_000) => {
      const until = Date.now() + ms;
      while (received.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} webhook requests, got ${received.length}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
      return received.slice(0, count);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
