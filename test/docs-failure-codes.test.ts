import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { between, providerTables, registryTable, root } from '../scripts/failure-codes';
import { failureCodes } from '../shared/domain/failures';

/** The failure-code tables the documentation shows are the registry's (run `npm run docs:failures` after changing it). */
describe('the failure codes in the documentation', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const doc = readFileSync(join(root, 'docs/failure-codes.md'), 'utf8');

  it("the README lists every PORTAL_* code with its category, reason and the merchant's action", () => {
    expect(between(readme, 'failure-codes')).toBe(registryTable());
    const rows = between(readme, 'failure-codes').split('\n').slice(2);
    expect(rows.map((row) => /`(PORTAL_[A-Z0-9_]+)`/.exec(row)![1])).toEqual(failureCodes);
    // The interface's categories, each present.
    for (const category of ['card_decline', 'compliance', 'limits', 'blockchain', 'session', 'system']) expect(rows.some((row) => row.includes(` ${category} `))).toBe(true);
  });

  it("docs/failure-codes.md maps each provider's codes as the adapters do", () => {
    expect(between(doc, 'provider-codes')).toBe(providerTables());
  });
});
