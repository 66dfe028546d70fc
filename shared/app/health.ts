import type { AppDeps } from './deps';

export type CheckState = 'ok' | 'down';
export interface HealthReport {
  status: 'ok' | 'degraded';
  version: string;
  checks: { store: CheckState; queue: CheckState };
}

const PROBE_TIMEOUT_MS = 2_000;

const probe = async (ping: () => Promise<void>): Promise<CheckState> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('probe timed out')), PROBE_TIMEOUT_MS);
  });
  try {
    await Promise.race([ping(), timeout]);
    return 'ok';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
};

/** Probe results are reused this long, so a busy prober cannot load the store. */
const REUSE_MS = 1_000;
const recent = new WeakMap<object, { at: number; report: Promise<HealthReport> }>();

/** Always answers: a dependency that is down makes the service `degraded`, not unhealthy. */
export const checkHealth = (deps: Pick<AppDeps, 'probes' | 'settings' | 'clock'>): Promise<HealthReport> => {
  const now = deps.clock.now();
  const last = recent.get(deps.probes);
  if (last && now - last.at < REUSE_MS) return last.report;
  const report = runChecks(deps);
  recent.set(deps.probes, { at: now, report });
  return report;
};

const runChecks = async (deps: Pick<AppDeps, 'probes' | 'settings'>): Promise<HealthReport> => {
  const [store, queue] = await Promise.all([probe(() => deps.probes.store.ping()), probe(() => deps.probes.queue.ping())]);
  return {
    status: store === 'ok' && queue === 'ok' ? 'ok' : 'degraded',
    version: deps.settings.version,
    checks: { store, queue },
  };
};
