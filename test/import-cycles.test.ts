/**
 * No import cycles among the service's sources (shared/**): a module never depends, through others,
 * on itself. Type-only imports count too. The second half feeds the same check small graphs.
 */
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findCycles, importGraph, repoRoot } from './support/source-imports';

describe('shared/', () => {
  it('has no import cycles', () => {
    const graph = importGraph('shared');
    expect(graph.size).toBeGreaterThan(50);
    const cycles = findCycles(graph).map((cycle) => cycle.map((file) => relative(repoRoot, file)).join(' → '));
    expect(cycles).toEqual([]);
  });
});

describe('the cycle check', () => {
  it('finds cycles of two and of three modules, and a module importing itself', () => {
    const graph = new Map([
      ['a', ['b', 'x']],
      ['b', ['a']],
      ['c', ['d']],
      ['d', ['e']],
      ['e', ['c', 'x']],
      ['f', ['f']],
      ['x', []],
    ]);
    expect(findCycles(graph)).toEqual(expect.arrayContaining([['a', 'b', 'a'], ['c', 'd', 'e', 'c'], ['f', 'f']]));
    expect(findCycles(graph)).toHaveLength(3);
  });

  it('lets shared imports without a way back through', () => {
    expect(findCycles(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]]))).toEqual([]);
  });
});
