/**
 * A server under benchmark, in a process of its own so the load generator does not share its core:
 *   `bare <file>`   node:http answering the JSON body in <file> (the ceiling on this machine)
 *   `memory`        the local stack on the in-memory store
 *   `cosmos`        the local stack on the embedded Cosmos protocol server
 * Prints one JSON line {url, apiKey} when ready; stops on SIGTERM.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack } from '../local/stack';

const [mode, bodyFile] = process.argv.slice(2);

const main = async () => {
  if (mode === 'bare') {
    const body = readFileSync(bodyFile!);
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      response.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: '' }));
    process.on('SIGTERM', () => process.exit(0));
    return;
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-'));
  // One load generator on loopback is one client address: the per-address limit would measure itself.
  const stack = await startLocalStack({ PORT: '0', DATA_DIR: dataDir, KEYLESS_RATE_LIMIT_PER_MINUTE: '100000000', ...(mode === 'memory' && { STORE: 'memory' }) }, () => {});
  console.log(JSON.stringify({ url: stack.credentials.baseUrl.replace('localhost', '127.0.0.1'), apiKey: stack.credentials.apiKey }));
  process.on('SIGTERM', () => {
    void stack.stop().finally(() => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
