import { describe, expect, it } from 'vitest';
import { returnToBudget, takeFromBudget } from '../../shared/app/counters';
import { allStores } from '../support/stores';

describe.each(allStores)('a shared daily budget on the $name store', (store) => {
  it('hands out exactly its limit to concurrent callers, and a returned unit can be taken again', async () => {
    const deps = await store.make();
    const taken = await Promise.all(Array.from({ length: 12 }, () => takeFromBudget(deps, 'budget:test', 5, Date.now() + 60_000)));
    expect(taken.filter(Boolean)).toHaveLength(5);
    expect(await takeFromBudget(deps, 'budget:test', 5, Date.now() + 60_000)).toBe(false);
    await returnToBudget(deps, 'budget:test');
    expect(await takeFromBudget(deps, 'budget:test', 5, Date.now() + 60_000)).toBe(true);
    expect(await takeFromBudget(deps, 'budget:test', 5, Date.now() + 60_000)).toBe(false);
  });
});
