/** `npm start`: the whole service on this machine with embedded defaults. Ctrl-C stops everything. */
import { findSubscriptionByKey } from '../shared/app/api-keys';
import { createOrder } from '../shared/app/orders';
import { ANVIL_ACCOUNTS } from './local/anvil';
import { startLocalStack, stackFiles, type LocalStack } from './local/stack';

/** A fresh demo order to pay in the browser (none when the demo shop cannot take one: no split, sold out). */
const demoOrder = async (stack: LocalStack): Promise<string | undefined> => {
  const { deps, credentials } = stack;
  const subscription = await findSubscriptionByKey(deps, credentials.apiKey);
  try {
    const { receipt } = await createOrder(deps, { wallet: credentials.wallet, subscriptionId: subscription?.id ?? null }, { items: [{ sku: 'MUG-CERAMIC', qty: 1 }] });
    return receipt.paymentUrl;
  } catch {
    return undefined;
  }
};

const main = async () => {
  const stack = await startLocalStack();
  const { baseUrl, apiKey, wallet, rpcUrl, chainId } = stack.credentials;
  const paymentUrl = await demoOrder(stack);
  console.log(`
  Service running at ${baseUrl}
    health:     curl ${baseUrl}/healthz
    inventory:  curl -H "Ocp-Apim-Subscription-Key: ${apiKey}" ${baseUrl}/api/inventory
    console:    ${baseUrl}/console  (sign in with a browser wallet; the demo merchant's is anvil's test account #1)
  Demo merchant ${wallet}
  Demo API key  ${apiKey}
  (also in ${stackFiles().credentials}; delete ${stackFiles().dataDir} to reset)
${
  paymentUrl
    ? `
  Pay a demo order: ${paymentUrl}
    in a browser wallet on network ${rpcUrl ?? '(none)'} (chain id ${chainId}) with buyer key ${ANVIL_ACCOUNTS[5].privateKey}
    (anvil's public test account #5: never use it on a real network), or from here: npm run pay -- ${paymentUrl.split('/').pop()}
`
    : ''
}`);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: saving the store and stopping…`);
    stack.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
};

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
