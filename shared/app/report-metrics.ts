import { allQueues } from '../registry';
import type { AppDeps } from './deps';

/**
 * The timer's work: the depth of every queue (and its poison queue) and the relayer's balance, as
 * the custom metrics the infrastructure's alerts read (`queue.depth` by `queue`, `relayer.balance.eth`).
 */
export const reportMetrics = async (deps: Pick<AppDeps, 'queueDepth' | 'chain' | 'metrics'>) => {
  for (const queue of allQueues.flatMap((name) => [name, `${name}-poison`])) {
    const depth = await deps.queueDepth(queue).catch(() => undefined);
    if (depth !== undefined) deps.metrics.record('queue.depth', depth, { queue });
  }
  const balance = await deps.chain?.relayerBalance().catch(() => undefined);
  if (balance !== undefined) deps.metrics.record('relayer.balance.eth', Number(balance / 10n ** 9n) / 1e9);
  await deps.metrics.flush();
};
