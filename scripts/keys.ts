/**
 * `npm run keys -- create --wallet <0x…> --scopes <list|all> --plan <plan> [--brand <name>]`
 * `npm run keys -- list [--wallet <0x…>]`
 * `npm run keys -- revoke <subscription id>`
 *
 * Works against the running local stack of this checkout (found through its data folder), or, when
 * none runs, against the saved store that the next `npm start` restores.
 */
import { parseArgs } from 'node:util';
import { createApiKey, listApiKeys, revokeApiKey } from '../shared/app/api-keys';
import { connectCosmos, type CosmosStore } from '../shared/adapters/cosmos/client';
import { localKeyIssuer } from '../shared/adapters/apim/local-key-issuer';
import { CosmosSubscriptionRepository } from '../shared/adapters/cosmos/subscriptions';
import { randomIds, systemClock } from '../shared/adapters/memory/runtime';
import { secretBoxFrom } from '../shared/composition';
import { loadConfig } from '../shared/config';
import { Plan, parseScopeList } from '../shared/domain/subscription';
import { walletAddress } from '../shared/domain/wallet';
import { restoreStore, saveStore } from './local/persist';
import { LOCAL_COSMOS_KEY, startCosmosServer } from './local/servers';
import { runningStack, stackFiles } from './local/stack';

const usage = `usage:
  npm run keys -- create --wallet <0x…> --scopes <comma list | all> --plan <starter|pro|enterprise|development> [--brand <name>]
  npm run keys -- list [--wallet <0x…>]
  npm run keys -- revoke <subscription id>`;

/** The running stack's store if this checkout has one up; otherwise the saved store, loaded in process. */
const openStore = async (): Promise<{ store: CosmosStore; where: string; close(): Promise<void> }> => {
  const files = stackFiles();
  const info = runningStack(files);
  if (info) {
    const store = connectCosmos({ endpoint: info.cosmosEndpoint, key: info.cosmosKey, database: info.database, requestTimeoutMs: 5_000 });
    return { store, where: `the running stack at ${info.baseUrl}`, close: async () => store.dispose() };
  }
  const server = await startCosmosServer();
  const store = connectCosmos({ endpoint: server.url, key: LOCAL_COSMOS_KEY, database: process.env.COSMOS_DATABASE ?? 'payments', requestTimeoutMs: 5_000 });
  await restoreStore(store, files.store);
  return {
    store,
    where: `the saved store ${files.store}`,
    close: async () => {
      await saveStore(store, files.store);
      store.dispose();
      await server.close();
    },
  };
};

const main = async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { wallet: { type: 'string' }, scopes: { type: 'string' }, plan: { type: 'string' }, brand: { type: 'string', default: 'default' } },
  });
  const [command, id] = positionals;
  if (!command || !['create', 'list', 'revoke'].includes(command)) throw new Error(usage);
  if (command === 'create' && (!values.wallet || !values.scopes || !values.plan)) throw new Error(usage);
  if (command === 'revoke' && !id) throw new Error(usage);
  const wallet = values.wallet === undefined ? undefined : walletAddress.safeParse(values.wallet);
  if (wallet && !wallet.success) throw new Error(`--wallet: ${wallet.error.issues[0]?.message}`);
  const plan = values.plan === undefined ? undefined : Plan.safeParse(values.plan);
  if (plan && !plan.success) throw new Error(`--plan: must be one of ${Plan.options.join(', ')}`);

  const { store, where, close } = await openStore();
  try {
    // The local stack's keys: made here and checked by the local host against their stored hash.
    const deps = {
      subscriptions: new CosmosSubscriptionRepository(store),
      keyIssuer: localKeyIssuer(randomIds),
      secretBox: secretBoxFrom(loadConfig({ ...process.env, STORE: 'memory', APP_ENV: process.env.APP_ENV ?? 'development' })),
      clock: systemClock,
      ids: randomIds,
    };
    if (command === 'create') {
      const { subscription, apiKey } = await createApiKey(deps, {
        wallet: wallet!.data!,
        scopes: parseScopeList(values.scopes!),
        plan: plan!.data!,
        brand: values.brand!,
      });
      console.log(`created ${subscription.id} in ${where}`);
      console.log(`wallet ${subscription.wallet}  plan ${subscription.plan}  scopes ${subscription.scopes.join(',')}`);
      console.log(`API key (shown once): ${apiKey}`);
    } else if (command === 'list') {
      const subscriptions = await listApiKeys(deps, { wallet: wallet?.data });
      console.log(`${subscriptions.length} key(s) in ${where}`);
      for (const s of subscriptions) {
        console.log([s.id, s.status, `${s.keyPrefix}…`, s.wallet, s.plan, s.scopes.join(','), new Date(s.createdAt).toISOString()].join('  '));
      }
    } else {
      const revoked = await revokeApiKey(deps, id!);
      console.log(`revoked ${revoked.id} in ${where}`);
    }
  } finally {
    await close();
  }
};

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
