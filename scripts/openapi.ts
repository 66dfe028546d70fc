/**
 * Writes the OpenAPI documents generated from the route table: `dist/openapi.json` (everything) and,
 * for API Management's two APIs, `infra/openapi.keyed.json` (routes that take a subscription key) and
 * `infra/openapi.keyless.json` (public, session and x402 routes). `--check` fails when the committed
 * infra files differ from what the route table generates.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openApiDocument } from '../shared/http/openapi';
import { allRoutes } from '../shared/http/routes';

const root = resolve(__dirname, '..');
/** APIM sets the real backend per deployment; this is only the documents' placeholder server. */
const SERVER = 'https://api.example.com';

export const generatedDocuments = (): Record<string, string> => {
  const text = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  return {
    'dist/openapi.json': text(openApiDocument(allRoutes, { title: 'Crypto Receipts API', serverUrl: SERVER })),
    'infra/openapi.keyed.json': text(openApiDocument(allRoutes.filter((route) => route.auth.kind === 'key'), { title: 'Crypto Receipts developer API', serverUrl: SERVER })),
    'infra/openapi.keyless.json': text(openApiDocument(allRoutes.filter((route) => route.auth.kind !== 'key'), { title: 'Crypto Receipts public and admin API', serverUrl: SERVER })),
  };
};

if (require.main === module) {
  const check = process.argv.includes('--check');
  // Tests build with --dist-only, so a stale committed infra/ copy is caught, not quietly rewritten.
  const distOnly = process.argv.includes('--dist-only');
  let stale = false;
  for (const [file, text] of Object.entries(generatedDocuments())) {
    const path = join(root, file);
    if (check) {
      let current = '';
      try {
        current = readFileSync(path, 'utf8');
      } catch {
        // missing counts as stale
      }
      if (file.startsWith('infra/') && current !== text) {
        console.error(`${file} is out of date: run npm run build`);
        stale = true;
      }
      continue;
    }
    if (distOnly && !file.startsWith('dist/')) continue;
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
  }
  if (stale) process.exit(1);
}
