import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Behaviour = number | 'hang' | 'redirect';

/** A webhook receiver on a free loopback port: answers each request by the next behaviour (then 200). */
export const startReceiver = async (behaviours: Behaviour[] = []) => {
  const received: Received[] = [];
  const plan = [...behaviours];
  const waiters: Array<() => void> = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body, at: Date.now() });
      waiters.splice(0).forEach((wake) => wake());
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
