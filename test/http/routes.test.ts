import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpFunctions } from '../../shared/http/function';
import { allRoutes, matchRoute, type RouteSpec } from '../../shared/http/routes';
import '../support/http';

const functionsDir = join(__dirname, '../../functions');

/** Every route that takes no API key, and why: public probes and sign-in, or a wallet session. */
const expectedKeyless: Record<string, string> = {
  'GET /healthz': 'public',
  'GET /api/auth/nonce': 'public',
  'POST /api/auth/login': 'public',
  'POST /api/auth/logout': 'session',
  'GET /api/auth/me': 'session',
  'POST /api/keys': 'session',
  'GET /api/keys': 'session',
  'DELETE /api/keys/{id}': 'session',
  'POST /api/keys/{id}/roll': 'session',
  'POST /api/shop/config': 'session',
  'POST /api/pricing/config': 'session',
  'GET /api/site/config': 'public',
  'GET /api/directory/shops': 'public',
  'GET /api/openapi.json': 'public',
  'POST /api/split/deploy': 'session',
  'POST /api/receipts/refund': 'session',
  'POST /api/receipts/refund/transaction': 'session',
  // The merchant console's session variants of developer routes (the same use cases).
  'GET /api/console/receipts': 'session',
  'GET /api/console/receipts/{id}': 'session',
  'GET /api/console/receipts/{id}/deliveries': 'session',
  'POST /api/console/receipts/{id}/deliveries/{eventId}/redeliver': 'session',
  'POST /api/console/receipts/terminal': 'session',
  'POST /api/console/webhooks/test': 'session',
  'POST /api/console/webhooks/secret/rotate': 'session',
  'POST /api/console/deposits/sweep': 'session',
  // The buyer's pages and calls: anyone holding the receipt's unguessable id.
  'GET /portal/{id}': 'portal',
  'GET /pay/{id}': 'portal',
  'GET /portal/assets/{file}': 'public',
  // The console's item writes, and the split a merchant deployed from its own wallet.
  'POST /api/console/inventory': 'session',
  'DELETE /api/console/inventory': 'session',
  'POST /api/split/register': 'session',
  // The merchant console's pages: the signed-in wallet's own, else the sign-in page; and its files.
  'GET /console': 'session',
  'GET /console/{page}': 'session',
  'GET /console/assets/{file}': 'public',
  'GET /api/portal/{id}': 'portal',
  'POST /api/portal/{id}/quote': 'portal',
  'GET /api/portal/{id}/qr.svg': 'portal',
  'POST /api/portal/{id}/events': 'portal',
  'POST /api/portal/{id}/payments': 'portal',
  'GET /api/portal/{id}/proof': 'portal',
  // A receipt proof's signer, published for buyers to verify against.
  'GET /.well-known/receipt-signer': 'public',
  'POST /api/portal/{id}/onramp': 'portal',
  // Card on-ramp: the provider's signed webhooks, and the sandbox provider's checkout page.
  'POST /api/onramp/{provider}/webhook': 'public',
  'GET /onramp/sandbox/{session}': 'public',
  'POST /onramp/sandbox/{session}': 'public',
  // Agents: paid by x402 (or, for the starter plan, a sign-in-with-x proof) instead of a key.
  'POST /api/x402/orders': 'x402',
  'POST /api/x402/subscribe': 'x402',
};

describe('the route table', () => {
  it('has exactly one registered function per route, with its method and full path', () => {
    expect([...httpFunctions.keys()].sort()).toEqual(allRoutes.map((route) => route.name).sort());
    for (const route of allRoutes) {
      const { options } = httpFunctions.get(route.name)!;
      expect(options).toMatchObject({ methods: [route.method], route: route.path.slice(1), authLevel: 'function' });
    }
  });

  it('requires a key on every developer route; only health, sign-in, admin and the buyer’s routes go without', () => {
    const keyless = Object.fromEntries(allRoutes.filter((route) => route.auth.kind !== 'key').map((route) => [`${route.method} ${route.path}`, route.auth.kind]));
    expect(keyless).toEqual(expectedKeyless);
  });

  it('uses no route the Azure Functions host keeps for itself (a first segment starting with admin)', () => {
    // The host refuses such routes ("conflicts with one or more built in routes"): the console is /console.
    expect(allRoutes.filter((route) => /^\/admin/i.test(route.path)).map((route) => route.path)).toEqual([]);
  });

  it('lets a fixed segment win over a parameter', () => {
    const table: RouteSpec[] = [
      { ...allRoutes[0]!, name: 'by-id', path: '/api/receipts/{id}' },
      { ...allRoutes[0]!, name: 'status', path: '/api/receipts/status' },
    ];
    expect(matchRoute(table, 'GET', '/api/receipts/status')?.route.name).toBe('status');
    expect(matchRoute(table, 'GET', '/api/receipts/R-1')).toMatchObject({ route: { name: 'by-id' }, params: { id: 'R-1' } });
    expect(matchRoute(table, 'POST', '/api/receipts/R-1')).toBeUndefined();
  });

  it('keeps function files thin: imports, one registration, nothing else', () => {
    const files = readdirSync(functionsDir).filter((file) => file.endsWith('.ts') && file !== 'index.ts');
    const index = readFileSync(join(functionsDir, 'index.ts'), 'utf8');
    for (const file of files) {
      const text = readFileSync(join(functionsDir, file), 'utf8');
      expect(index, `${file} is not loaded by functions/index.ts`).toContain(`'./${file.replace(/\.ts$/, '')}'`);
      expect(text.split('\n').filter((line) => line.trim()).length, file).toBeLessThanOrEqual(40);
      expect(text, file).not.toMatch(/process\.env|try\s*{|@azure\/cosmos|@azure\/storage-queue/);
    }
  });

  it('keeps the domain free of SDKs and the environment', () => {
    const dir = join(__dirname, '../../shared/domain');
    for (const file of readdirSync(dir)) {
      expect(readFileSync(join(dir, file), 'utf8'), file).not.toMatch(/from '@azure\/|from 'ethers'|from 'jsonwebtoken'|process\.env|Date\.now\(\)/);
    }
  });
});
