/**
 * docs/architecture.md lists every route and every queue or timer function; its tables are checked
 * here against the route table and the trigger table, so the document cannot fall behind the code.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allRoutes, type RouteSpec } from '../shared/http/routes';
import { allTriggers } from '../shared/triggers/table';
import { repoRoot } from './support/source-imports';

const doc = readFileSync(join(repoRoot, 'docs/architecture.md'), 'utf8');

/** The rows of the first table under a `## ` heading, as cells. */
const tableUnder = (heading: string): string[][] => {
  const section = doc.split(/^## /m).find((part) => part.startsWith(`${heading}\n`));
  if (!section) throw new Error(`docs/architecture.md has no "## ${heading}" section`);
  const rows = section.split('\n').filter((line) => line.startsWith('|'));
  return rows.slice(2).map((row) => row.split('|').slice(1, -1).map((cell) => cell.trim()));
};

const authText = (auth: RouteSpec['auth']) => {
  switch (auth.kind) {
    case 'key':
      return auth.scope ? `key \`${auth.scope}\`` : 'key';
    case 'session':
      return `session (${auth.role})`;
    default:
      return auth.kind;
  }
};

describe('docs/architecture.md', () => {
  it('lists every route with its method, path, auth and function name', () => {
    const documented = tableUnder('Routes').map(([route, auth, name]) => `${route} | ${auth} | ${name}`);
    const routes = allRoutes.map((route) => `\`${route.method} ${route.path}\` | ${authText(route.auth)} | \`${route.name}\``);
    expect([...documented].sort()).toEqual([...routes].sort());
  });

  it('lists every queue and timer function with its queue or schedule', () => {
    const documented = tableUnder('Triggers').map(([name, trigger]) => `${name} | ${trigger}`);
    const triggers = allTriggers.map((trigger) => `\`${trigger.name}\` | ${trigger.kind === 'queue' ? `queue \`${trigger.queue}\`` : `timer \`${trigger.schedule}\``}`);
    expect([...documented].sort()).toEqual([...triggers].sort());
  });

  it('names only files and folders of this repository that exist, or the upcoming ones it describes', () => {
    const upcoming = ['shared/app/payments/', 'shared/app/x402/', 'shared/domain/x402.ts', 'web/', 'web/portal/', 'web/console/', 'web/styles/'];
    const named = [...doc.matchAll(/`((?:shared|scripts|functions|test|docs|infra|web|contracts)\/[^`*<]*?)`/g)].map((match) => match[1]!);
    const missing = named.filter((path) => !upcoming.includes(path) && !existsIn(path));
    expect(missing).toEqual([]);
  });
});

const existsIn = (path: string) => {
  try {
    readFileSync(join(repoRoot, path.replace(/\/$/, '')));
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EISDIR';
  }
};
