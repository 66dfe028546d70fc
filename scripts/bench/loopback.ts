/** A benchmark's own servers on loopback: listen on a free port, its URL, and a close that does not wait for idle keep-alive connections. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const listen = (server: Server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
export const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
export const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
