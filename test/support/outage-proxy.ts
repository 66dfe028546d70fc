import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a server, on a fixed loopback port: `down()` closes its listener (the
 * server behind keeps its data), `up()` listens again on the same port. Simulates a store outage.
 */
export const startOutageProxy = async (target: string) => {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (at: number) => new Promise<number>((resolve) => server.listen(at, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  const proxyPort = await listen(0);
  return {
    url: `http://127.0.0.1:${proxyPort}`,
    down: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        sockets.forEach((socket) => socket.destroy());
      }),
    up: async () => {
      await listen(proxyPort);
    },
  };
};
