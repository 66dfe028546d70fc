import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { JsonRpcProvider, Wallet } from 'ethers';
import { afterAll, describe, expect, it } from 'vitest';
import { call, root, stackEnv, startStack, stopStack, tsx, waitFor, type StartedStack } from '../support/stack';

/** Drives `npm start` and `npm run keys` as a user would, over HTTP, in a data folder of its own. */
const dataDir = mkdtempSync(join(tmpdir(), 'stack-e2e-'));
const env = stackEnv(dataDir);
const run = promisify(execFile);
const start = () => startStack(env);
const stop = stopStack;
const keys = async (...args: string[]) => (await run(tsx, ['scripts/keys.ts', ...args], { cwd: root, env })).stdout;

let running: StartedStack | undefined;
afterAll(async () => {
  if (running && running.child.exitCode === null) await stop(running);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start: the local stack over HTTP', () => {
  let firstKey = '';
  let itemId = '';
  let readerKey = '';
  let readerId = '';
  let splitAddress = '';
  let firstCredentials: Record<string, unknown> = {};
  let receiptSigner = '';

  it('starts with embedded defaults, prints the base URL and a demo key, and writes them to the data folder', async () => {
    running = await start();
    const credentials = JSON.parse(readFileSync(join(dataDir, 'local-credentials.json'), 'utf8'));
    const address = expect.stringMatching(/^0x[0-9a-f]{40}$/);
    expect(credentials).toEqual({
      baseUrl: running.baseUrl,
      apiKey: running.apiKey,
      wallet: address,
      shopSlug: 'demo-coffee',
      rpcUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      chainId: 31337,
      tokens: { USDC: address, USDT: address },
      ethUsdFeed: address,
      buyers: [address, address, address, address, address],
    });
    firstCredentials = credentials;
    expect(running.baseUrl).toMatch(/^http:\/\/localhost:\d+$/);
    const health = await call(running.baseUrl, '/healthz');
    expect(health).toMatchObject({ status: 200, json: { status: 'ok', checks: { store: 'ok', queue: 'ok' } } });
    firstKey = running.apiKey;
    // The receipt-signing key: made on this first start, owner-only, its address published for buyers.
    const signingKey = join(dataDir, 'receipt-signing-key.json');
    expect(statSync(signingKey).mode & 0o777).toBe(0o600);
    receiptSigner = new Wallet(JSON.parse(readFileSync(signingKey, 'utf8')).privateKey).address;
    expect(await call(running.baseUrl, '/.well-known/receipt-signer')).toMatchObject({ status: 200, json: { address: receiptSigner, chainId: 31337 } });
    // A demo order's payment link, ready to open in a browser wallet or to pay with npm run pay.
    const link = /Pay a demo order: (\S+)/.exec(running.output())?.[1];
    expect(link).toMatch(new RegExp(`^${running.baseUrl}/pay/R-[A-Z2-7]{16}$`));
    const page = await fetch(link!);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(running.output()).toContain(`npm run pay -- ${link!.split('/').pop()}`);
  }, 90_000);

  it('serves the seeded inventory and takes writes with the printed key', async () => {
    const seeded = await call(running!.baseUrl, '/api/inventory?sort=priceUsd&order=asc', { key: firstKey });
    expect(seeded.status).toBe(200);
    expect((seeded.json.total as number) > 0).toBe(true);
    const created = await call(running!.baseUrl, '/api/inventory', { method: 'POST', key: firstKey, body: { sku: 'E2E-1', name: 'Kept across restarts', priceUsd: 3.5 } });
    expect(created.status).toBe(200);
    itemId = (created.json.item as { id: string }).id;
    expect((await call(running!.baseUrl, '/api/inventory')).status).toBe(401);
  });

  it('npm run keys creates, lists and revokes keys in the running stack', async () => {
    const created = await keys('create', '--wallet', '0x' + '3'.repeat(40), '--scopes', 'inventory:read', '--plan', 'pro');
    expect(created).toContain('the running stack');
    readerKey = /API key \(shown once\): (\S+)/.exec(created)![1]!;
    readerId = /created (\S+)/.exec(created)![1]!;
    const list = await call(running!.baseUrl, '/api/inventory', { key: readerKey });
    expect(list).toMatchObject({ status: 200, json: { total: 0 } });
    expect(list.status).toBe(200);
    const write = await call(running!.baseUrl, '/api/inventory', { method: 'POST', key: readerKey, body: { sku: 'X', name: 'X', priceUsd: 1 } });
    expect(write).toMatchObject({ status: 403, json: { error: 'forbidden' } });
    const listed = await keys('list');
    expect(listed).toContain(readerId);
    expect(listed).not.toContain(readerKey);
    await keys('revoke', readerId);
    await waitFor('the revocation to apply', async () =>
      (await call(running!.baseUrl, '/api/inventory', { key: readerKey })).status === 401 ? true : undefined,
    10_000);
  });

  it('has the demo shop ready for orders: a split on the local chain, tax defaults, a fee, a directory listing', async () => {
    const directory = await call(running!.baseUrl, '/api/directory/shops?q=coffee');
    expect(directory).toMatchObject({ status: 200, json: { directory: [{ slug: 'demo-coffee', categories: ['coffee'] }], meta: { totalReturned: 1 } } });
    const split = (await call(running!.baseUrl, '/api/split/deploy', { key: firstKey })).json.split as { address: string };
    splitAddress = split.address;
    const rpc = JSON.parse(readFileSync(join(dataDir, 'stack.json'), 'utf8')).chainRpcUrl as string;
    expect(await new JsonRpcProvider(rpc).getCode(splitAddress)).not.toBe('0x');
    const order = await call(running!.baseUrl, '/api/orders', { method: 'POST', key: firstKey, body: { items: [{ sku: 'E2E-1', qty: 2 }] } });
    expect(order).toMatchObject({ status: 200, json: { receipt: { status: 'generated', jurisdictionCode: 'US-CA', totalUsd: expect.any(Number) } } });
  });

  it('stops on Ctrl-C, saving the store', async () => {
    expect(await stop(running!)).toBe(0);
    expect(existsSync(join(dataDir, 'stack.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'store.json'))).toBe(true);
  });

  it('npm run keys edits the saved store while the stack is down', async () => {
    const created = await keys('create', '--wallet', '0x' + '4'.repeat(40), '--scopes', 'all', '--plan', 'starter');
    expect(created).toContain('the saved store');
    readerKey = /API key \(shown once\): (\S+)/.exec(created)![1]!;
  });

  it('restarts with keys, inventory and revocations kept, and the same demo key', async () => {
    running = await start();
    expect(running.apiKey).toBe(firstKey);
    // The restored chain keeps every address; only the ports may be new.
    expect(JSON.parse(readFileSync(join(dataDir, 'local-credentials.json'), 'utf8'))).toEqual({
      ...firstCredentials,
      baseUrl: running.baseUrl,
      rpcUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
    const items = await call(running.baseUrl, '/api/inventory?q=kept', { key: firstKey });
    expect(items.json.items).toEqual([expect.objectContaining({ id: itemId, name: 'Kept across restarts' })]);
    expect((await call(running.baseUrl, '/api/inventory', { key: readerKey })).status).toBe(200);
    const revoked = (await keys('list')).split('\n').find((line) => line.startsWith(readerId));
    expect(revoked).toContain('revoked');
    const split = (await call(running.baseUrl, '/api/split/deploy', { key: firstKey })).json.split as { address: string };
    expect(split.address).toBe(splitAddress);
    expect((await call(running.baseUrl, '/.well-known/receipt-signer')).json.address).toBe(receiptSigner);
    const rpc = JSON.parse(readFileSync(join(dataDir, 'stack.json'), 'utf8')).chainRpcUrl as string;
    expect(await new JsonRpcProvider(rpc).getCode(splitAddress)).not.toBe('0x');
    expect(await stop(running)).toBe(0);
  }, 90_000);
});
