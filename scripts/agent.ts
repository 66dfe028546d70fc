/**
 * `npm run agent`: a software agent with nothing but a wallet, against the stack `npm start` runs:
 * it lists the shop directory, buys from the first shop with the standard x402 client
 * (`@x402/fetch`, paying USDC on the local chain), and buys itself an API key on the pro plan.
 */
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm';
import { privateKeyToAccount } from 'viem/accounts';
import { ANVIL_ACCOUNTS } from './local/anvil';
import { runningCredentials, stackFiles } from './local/stack';
import { UsageError, parseCommandLine, runCli } from './cli';

const usage = `usage:
  npm run agent -- [--buyer N] [--sku SKU] [--plan pro|enterprise]
  npm run agent -- --help

An agent against the stack \`npm start\` runs from this checkout: lists the shop directory, orders one
SKU from the first listed shop (default: its first item in the demo, COFFEE-BEANS-1KG) paying USDC
by x402 with @x402/fetch, then subscribes to a paid plan (default pro) the same way, and prints the
paid receipt and the API key (shown once).

  --buyer <N>   1 to 5: anvil's test accounts #5 to #9, funded with test USDC (default 2)
  --sku <SKU>   what to buy (default COFFEE-BEANS-1KG)
  --plan <P>    pro or enterprise (default pro)

Environment:
  DATA_DIR   the stack's data folder (default .data)

Exit status: 0 done, 1 failed, 2 bad usage.`;

const main = async () => {
  const { values, positionals } = parseCommandLine({ buyer: { type: 'string', default: '2' }, sku: { type: 'string', default: 'COFFEE-BEANS-1KG' }, plan: { type: 'string', default: 'pro' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const buyerNumber = Number(values.buyer);
  if (!Number.isInteger(buyerNumber) || buyerNumber < 1 || buyerNumber > 5) throw new UsageError('--buyer: 1 to 5');
  const plan = values.plan;
  if (plan !== 'pro' && plan !== 'enterprise') throw new UsageError('--plan: pro or enterprise');
  const sku = values.sku;

  const { baseUrl, chainId, tokens } = runningCredentials(stackFiles(process.env.DATA_DIR));
  if (!chainId || !tokens?.USDC) throw new Error('the running stack has no local chain with test USDC');
  const account = privateKeyToAccount(ANVIL_ACCOUNTS[4 + buyerNumber]!.privateKey as `0x${string}`);
  const network = `eip155:${chainId}` as const;
  const pay = wrapFetchWithPaymentFromConfig(fetch, {
    schemes: [{ network, client: new ExactEvmScheme(account) }],
    // The client pays only assets it knows; the local chain's test USDC is named here, with a cap (1,000 USDC).
    spendControls: { allowedAssets: [{ network, asset: tokens.USDC, maxAmountPerPayment: '1000000000' }] },
  });
  const post = (path: string, body: unknown) => pay(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  const directory = (await (await fetch(`${baseUrl}/api/directory/shops?limit=5`)).json()) as { directory: Array<{ slug: string; name: string }> };
  console.log(`directory: ${directory.directory.map((shop) => `${shop.name} (${shop.slug})`).join(', ') || '(empty)'}`);
  const shop = directory.directory[0];
  if (!shop) throw new Error('no shop is listed in the directory');

  const order = await post('/api/x402/orders', { shopSlug: shop.slug, items: [{ sku, qty: 1 }] });
  const receipt = (await order.json()) as { receipt?: { receiptId: string; totalUsd: number; status: string }; error?: string; message?: string };
  if (!order.ok || !receipt.receipt) throw new Error(`the order was refused: ${order.status} ${receipt.error ?? ''} ${receipt.message ?? ''}`);
  const settled = decodePaymentResponseHeader(order.headers.get('PAYMENT-RESPONSE') ?? '');
  console.log(`order: receipt ${receipt.receipt.receiptId}, ${receipt.receipt.totalUsd} USD, ${receipt.receipt.status} (transaction ${settled.transaction}, from ${account.address})`);

  const subscription = await post('/api/x402/subscribe', { planKey: plan });
  const result = (await subscription.json()) as { apiKey?: string; plan?: string; expiresAt?: number; error?: string; message?: string };
  if (!subscription.ok || !result.apiKey) throw new Error(`the subscription was refused: ${subscription.status} ${result.error ?? ''} ${result.message ?? ''}`);
  console.log(`subscription: ${result.plan} until ${new Date(result.expiresAt!).toISOString()}, API key ${result.apiKey}`);
};

runCli(usage, main);
