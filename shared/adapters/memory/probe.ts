import type { HealthProbe } from '../../ports/runtime';

/** The in-process store's probe: it is always reachable. */
export const alwaysUp: HealthProbe = { ping: async () => {} };
