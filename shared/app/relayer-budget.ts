/**
 * The relayer's daily budget for the gas it pays besides split deployments: x402 settlements, the
 * distributions that reconcile paid receipts and the sweeps of deposit addresses before them, each kind
 * counted per UTC day, all callers together, in a claims document of its own (`takeFromBudget`). Whoever asks, the day's count never passes the
 * limit; a unit taken for work that sent nothing goes back. See docs/decisions.md, "The relayer's budget".
 */
import { DomainError } from '../domain/errors';
import { DAY_MS } from '../domain/split';
import { returnToBudget, takeFromBudget } from './counters';
import type { AppDeps } from './deps';

export type RelayerWork = 'settlement' | 'distribution' | 'sweep';

/** A unit of the day's budget, taken. */
export interface RelayerUnit {
  /** Gives the unit back (once, best effort): the work sent no transaction. */
  giveBack(): Promise<void>;
}

type BudgetDeps = Pick<AppDeps, 'claims' | 'clock' | 'settings'>;

const dayStartOf = (now: number) => now - (now % DAY_MS);

/** The counter of `work` for the UTC day of `now`. */
export const relayerBudgetId = (work: RelayerWork, now: number) => `relayer-budget:${work}:${new Date(dayStartOf(now)).toISOString().slice(0, 10)}`;

/** When the day's budget of `now` is renewed: the next midnight UTC. */
export const relayerBudgetResetAt = (now: number) => dayStartOf(now) + DAY_MS;

/** One unit of today's budget for `work`, or undefined when the day's limit is taken. */
export const takeRelayerUnit = async (deps: BudgetDeps, work: RelayerWork): Promise<RelayerUnit | undefined> => {
  const now = deps.clock.now();
  const id = relayerBudgetId(work, now);
  const { settlementsPerDay, distributionsPerDay, sweepsPerDay } = deps.settings.relayer;
  const limit = { settlement: settlementsPerDay, distribution: distributionsPerDay, sweep: sweepsPerDay }[work];
  // Kept a day past its own, so a unit given back after midnight still finds the counter it came from.
  if (!(await takeFromBudget(deps, id, limit, dayStartOf(now) + 2 * DAY_MS))) return undefined;
  let returned = false;
  return {
    giveBack: async () => {
      if (returned) return;
      returned = true;
      await returnToBudget(deps, id).catch(() => undefined);
    },
  };
};

/** The unit an x402 settlement spends; the day's spent: 503 `relayer_budget_spent` until midnight UTC, nothing charged. */
export const takeSettlementUnit = async (deps: BudgetDeps): Promise<RelayerUnit> => {
  const unit = await takeRelayerUnit(deps, 'settlement');
  if (unit) return unit;
  throw new DomainError(
    'relayer_budget_spent',
    'the service has settled as many x402 payments today as it pays gas for; nothing was charged: order again after midnight UTC',
    { resetAt: relayerBudgetResetAt(deps.clock.now()) },
  );
};
