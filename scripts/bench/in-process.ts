/**
 * The cost of one handler call as the Functions host makes it: a `new HttpRequest`, the handler
 * registered with `app.http`, the in-memory store. No network, no gateway: what Azure pays per call
 * inside the worker. Run alone with `tsx scripts/bench/in-process.ts`, or from `npm run bench`.
 */
import { HttpRequest, InvocationContext } from '@azure/functions';
import { createApiKey } from '../../shared/app/api-keys';
import { updateMerchant } from '../../shared/app/merchants';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { memoryDeps, setDeps } from '../../shared/composition';
import { InventoryUpsertInput } from '../../shared/domain/inventory';
import { scopes } from '../../shared/domain/subscription';
import { httpFunctions } from '../../shared/http/function';
import '../local/functions';

const WALLET = '0x' + 'ab'.repeat(20);
const context = new InvocationContext({ functionName: 'bench', logHandler: () => {} });

const prepare = async (items: number) => {
  const deps = memoryDeps();
  setDeps(deps);
  const { subscription } = await createApiKey(deps, { wallet: WALLET, scopes: [...scopes], plan: 'development', brand: 'default' });
  for (let n = 0; n < items; n++) {
    const input = InventoryUpsertInput.parse({ sku: `BENCH-${n}`, name: `Benchmark item ${n}`, priceUsd: (n % 500) + 0.99, stockQty: n % 7, category: `cat-${n % 10}`, tags: [`t${n % 5}`, `u${n % 3}`] });
    await upsertInventoryItem(deps, WALLET, input);
  }
  await updateMerchant(deps, WALLET, (current, now) => ({
    merchant: { ...current, split: { address: '0x' + '5'.repeat(40), recipients: [], platformFeeBps: 100, partnerFeeBps: 50, txHash: '0x' + '6'.repeat(64), chainId: 31337, deployedAt: now } },
    result: undefined,
  }));
  return subscription.id;
};

/** Median µs per call over `rounds` batches of `batch` calls, after a warm-up. */
const measure = async (call: () => Promise<unknown>, batch = 200, rounds = 15) => {
  for (let n = 0; n < batch * 2; n++) await call();
  const perCall: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = process.hrtime.bigint();
    for (let n = 0; n < batch; n++) await call();
    perCall.push(Number(process.hrtime.bigint() - started) / 1e3 / batch);
  }
  return perCall.sort((a, b) => a - b)[Math.floor(perCall.length / 2)]!;
};

export const LIST_PATH = '/api/inventory?category=cat-3&stock=in&sort=priceUsd&order=asc&limit=50';

export const measureInProcess = async (items = 1_000) => {
  const subscriptionId = await prepare(items);
  const headers = { 'x-subscription-id': subscriptionId };
  const handler = (name: string) => httpFunctions.get(name)!.options.handler;
  const list = handler('inventory-list');
  const order = handler('orders-create');
  const orderBody = JSON.stringify({ items: [{ sku: 'BENCH-5', qty: 2 }, { sku: 'BENCH-22', qty: 1 }, { sku: 'BENCH-335', qty: 3 }], jurisdictionCode: 'US-CA' });
  const expectOk = (status: number | undefined, what: string) => {
    if ((status ?? 200) >= 300) throw new Error(`${what} answered ${status}`);
  };
  const inventoryPage = await measure(async () => {
    const response = await list(new HttpRequest({ method: 'GET', url: `http://localhost${LIST_PATH}`, headers }), context);
    expectOk((response as { status?: number }).status, 'inventory list');
  });
  const orderPricing = await measure(async () => {
    const response = await order(new HttpRequest({ method: 'POST', url: 'http://localhost/api/orders', headers, body: { string: orderBody } }), context);
    expectOk((response as { status?: number }).status, 'order');
  }, 100, 11);
  return { inventoryPage, orderPricing };
};

if (require.main === module) {
  measureInProcess().then(
    ({ inventoryPage, orderPricing }) => console.log(`in-process handler call (median µs): inventory page ${inventoryPage.toFixed(0)}, order pricing ${orderPricing.toFixed(0)}`),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
