/**
 * The failure-code tables of the documentation, made from the registry itself: the README's table
 * for merchants and docs/failure-codes.md's provider mappings. `npm run docs:failures` writes them;
 * test/docs-failure-codes.test.ts fails when the written tables and the registry differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { failureCodes, failureInfo } from '../shared/domain/failures';
import { SANDBOX_UNKNOWN_CODE, portalCodeFor, sandboxCodes, stripeCodes } from '../shared/domain/onramp-codes';

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** Code | category | meaning | what the merchant should do. */
export const registryTable = (): string =>
  [
    '| Code | Category | Meaning | What to do |',
    '|---|---|---|---|',
    ...failureCodes.map((code) => {
      const { category, reason, action } = failureInfo(code);
      return `| \`${code}\` | ${category} | ${cell(reason)} | ${cell(action)} |`;
    }),
  ].join('\n');

const mappingTable = (table: Readonly<Record<string, string>>): string =>
  ['| Provider code | PORTAL code |', '|---|---|', ...Object.entries(table).map(([provider, code]) => `| \`${provider}\` | \`${code}\` |`)].join('\n');

export const providerTables = (): string =>
  [
    '### Stripe (card decline codes and crypto on-ramp rejections)',
    '',
    mappingTable(stripeCodes),
    '',
    '### Sandbox (the outcomes of its checkout page)',
    '',
    mappingTable(sandboxCodes),
    '',
    `The sandbox's \`${SANDBOX_UNKNOWN_CODE}\` stands for a code no table knows: it becomes \`${portalCodeFor('sandbox', SANDBOX_UNKNOWN_CODE)}\`.`,
  ].join('\n');

const START = (name: string) => `<!-- ${name}:start -->`;
const END = (name: string) => `<!-- ${name}:end -->`;

/** The text between a file's markers. */
export const between = (text: string, name: string): string => {
  const start = text.indexOf(START(name));
  const end = text.indexOf(END(name));
  if (start < 0 || end < start) throw new Error(`no ${name} markers`);
  return text.slice(start + START(name).length, end).trim();
};

const replaceBetween = (text: string, name: string, content: string) => {
  const start = text.indexOf(START(name)) + START(name).length;
  return `${text.slice(0, start)}\n${content}\n${text.slice(text.indexOf(END(name)))}`;
};

export const root = join(__dirname, '..');

if (require.main === module) {
  const readme = join(root, 'README.md');
  writeFileSync(readme, replaceBetween(readFileSync(readme, 'utf8'), 'failure-codes', registryTable()));
  const doc = join(root, 'docs/failure-codes.md');
  writeFileSync(doc, replaceBetween(readFileSync(doc, 'utf8'), 'provider-codes', providerTables()));
  console.log('wrote the failure-code tables to README.md and docs/failure-codes.md');
}
