/**
 * `npm run keys -- create --wallet <0x…> --scopes <list|all> --plan <plan> [--brand <name>]`
 * `npm run keys -- list [--wallet <0x…>]`
 * `npm run keys -- revoke <subscription id>`
 * `npm run keys -- --help`
 *
 * Works against the running local stack of this checkout (found through its data folder), or, when
 * none runs, against the saved store that the next `npm start` restores. Exit status: 0 done,
 * 1 failed, 2 bad usage (with the usage on stderr).
 */
import { createApiKey, listApiKeys, revokeApiKey } from '../shared/app/api-keys';
import { connectCosmos, type CosmosStore } from '../shared/adapters/cosmos/client';
import { localKeyIssuer } from '../shared/adapters/apim/local-key-issuer';
import { CosmosSubscriptionRepository } from '../shared/adapters/cosmos/subscriptions';
import { randomIds, systemClock } from '../shared/adapters/system/runtime';
import { secretBoxFrom } from '../shared/composition';
import { loadConfig } from '../shared/config';
import { Plan, parseScopeList, scopes } from '../shared/domain/subscription';
import { walletAddress } from '../shared/domain/wallet';
import { restoreStore, saveStore } from './local/persist';
import { LOCAL_COSMOS_KEY, startCosmosServer } from './local/servers';
import { runningStack, stackFiles } from './local/stack';
import { UsageError, parseCommandLine, runCli } from './cli';

const usage = `usage:
  npm run keys -- create --wallet <0x…> --scopes <comma list | all> --plan <${Plan.options.join('|')}> [--brand <name>]
  npm run keys -- list [--wallet <0x…>]
  npm run keys -- revoke <subscription id>
  npm run keys -- --help

Creates, lists and revokes API keys in the stack \`npm start\` runs from this checkout, or, when none
runs, in the saved store (.data/store.json) the next start loads. The key is printed once.

  --wallet <0x…>    the merchant wallet (create: required; list: only this wallet's keys)
  --scopes <list>   comma-separated, from: ${scopes.join(', ')}; or all
  --plan <plan>     ${Plan.options.join(', ')}
  --brand <name>    the brand key (default: default)

Environment:
  DATA_DIR              the stack's data folder (default .data)
  COSMOS_DATABASE       the database in the saved store (default payments)
  DATA_ENCRYPTION_KEY   the stack's, when it sets one: it encrypts the copy of the key that signs webhooks

Exit status: 0 done, 1 failed, 2 bad usage.`;

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
  const { positionals, values } = parseCommandLine({
    wallet: { type: 'string' },
    scopes: { type: 'string' },
    plan: { type: 'string' },
    brand: { type: 'string', default: 'default' },
  });
  const [command, id] = positionals;
  if (!command) throw new UsageError('name a command: create, list or revoke');
  if (!['create', 'list', 'revoke'].includes(command)) throw new UsageError(`unknown command ${command}`);
  if (command === 'create' && (!values.wallet || !values.scopes || !values.plan)) throw new UsageError('create needs --wallet, --scopes and --plan');
  if (command === 'revoke' && !id) throw new UsageError('revoke needs a subscription id');
  const expected = command === 'revoke' ? 2 : 1;
  if (positionals.length > expected) throw new UsageError(`unexpected argument ${positionals[expected]}`);
  const wallet = values.wallet === undefined ? undefined : walletAddress.safeParse(values.wallet);
  if (wallet && !wallet.success) throw new UsageError(`--wallet: ${wallet.error.issues[0]?.message}`);
  const plan = values.plan === undefined ? undefined : Plan.safeParse(values.plan);
  if (plan && !plan.success) throw new UsageError(`--plan: must be one of ${Plan.options.join(', ')}`);
  let scopeList: ReturnType<typeof parseScopeList> | undefined;
  try {
    scopeList = values.scopes === undefined ? undefined : parseScopeList(values.scopes);
  } catch (error) {
    throw new UsageError(`--${(error as Error).message}`);
  }

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
        scopes: scopeList!,
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

runCli(usage, main);
