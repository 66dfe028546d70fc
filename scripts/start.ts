/** `npm start`: the whole service on this machine with embedded defaults. Ctrl-C stops everything. */
import { startLocalStack, stackFiles } from './local/stack';

const main = async () => {
  const stack = await startLocalStack();
  const { baseUrl, apiKey, wallet } = stack.credentials;
  console.log(`
  Service running at ${baseUrl}
    health:     curl ${baseUrl}/healthz
    inventory:  curl -H "Ocp-Apim-Subscription-Key: ${apiKey}" ${baseUrl}/api/inventory
  Demo merchant ${wallet}
  Demo API key  ${apiKey}
  (also in ${stackFiles().credentials}; delete ${stackFiles().dataDir} to reset)
`);
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
