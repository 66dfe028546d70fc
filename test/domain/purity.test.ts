/**
 * shared/domain is imported by browser bundles too (the payment portal's page takes money, statuses
 * and failure codes from it), and it is the pure core: no I/O, no clock, no environment. Every file
 * under it is read here; the second half feeds the same check sources that break each rule.
 */
import { builtinModules } from 'node:module';
import { relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import ts from 'typescript';
import { importsOf, parse, repoRoot, resolveRelative, sourceFiles } from '../support/source-imports';

/** The one package the domain uses; platform modules and SDKs (@azure/*, ethers, jsonwebtoken, siwe …) are for adapters. */
const ALLOWED_PACKAGES = new Set(['zod']);
/** Node's globals: a browser has none of them. */
const NODE_GLOBALS = new Set(['process', 'Buffer', 'require', 'module', '__dirname', '__filename', 'global', 'setImmediate']);
const DOMAIN = `${repoRoot}${sep}shared${sep}domain${sep}`;

const isName = (node: ts.Identifier) => {
  const parent = node.parent;
  return (
    (ts.isPropertyAccessExpression(parent) && parent.name === node) ||
    (ts.isQualifiedName(parent) && parent.right === node) ||
    ((ts.isPropertyAssignment(parent) || ts.isPropertySignature(parent) || ts.isPropertyDeclaration(parent) || ts.isMethodDeclaration(parent)) && parent.name === node)
  );
};

/** What keeps a source out of the domain, one line per finding. */
const impurities = (fileName: string, text?: string): string[] => {
  const source = parse(fileName, text);
  const found: string[] = [];
  const where = (node: ts.Node) => `${relative(repoRoot, fileName)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  for (const specifier of importsOf(source)) {
    if (specifier.startsWith('.')) {
      const target = resolveRelative(fileName, specifier);
      if (!target?.startsWith(DOMAIN)) found.push(`imports ${specifier}, outside shared/domain`);
    } else if (specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0]!)) {
      found.push(`imports the Node module ${specifier}`);
    } else if (!ALLOWED_PACKAGES.has(specifier)) {
      found.push(`imports the package ${specifier}`);
    }
  }
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) && NODE_GLOBALS.has(node.text) && !isName(node)) found.push(`${where(node)} uses Node's ${node.text}`);
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && ts.isIdentifier(node.name)) {
      const read = `${node.expression.text}.${node.name.text}`;
      if (read === 'Date.now' || read === 'performance.now') found.push(`${where(node)} reads the clock (${read})`);
    }
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'Date' && !node.arguments?.length) {
      found.push(`${where(node)} reads the clock (new Date())`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
};

describe('shared/domain', () => {
  const files = sourceFiles('shared/domain');

  it('has sources to check', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files.map((file) => [relative(repoRoot, file), file]))('%s uses no Node module or global, SDK, environment or clock', (_, file) => {
    expect(impurities(file)).toEqual([]);
  });
});

describe('the purity check', () => {
  const file = `${DOMAIN}example.ts`;
  it.each([
    ["import { createHash } from 'node:crypto';", 'imports the Node module node:crypto'],
    ["import { BlockList } from 'net';", 'imports the Node module net'],
    ["export { readFile } from 'fs/promises';", 'imports the Node module fs/promises'],
    ["import type { Container } from '@azure/cosmos';", 'imports the package @azure/cosmos'],
    ["import { Wallet } from 'ethers';", 'imports the package ethers'],
    ["const jwt = require('jsonwebtoken');", 'imports the package jsonwebtoken'],
    ["const load = () => import('siwe');", 'imports the package siwe'],
    ["import { AppDeps } from '../app/deps';", 'imports ../app/deps, outside shared/domain'],
    ['export const env = process.env.APP_ENV;', "uses Node's process"],
    ["export const size = (text: string) => Buffer.byteLength(text);", "uses Node's Buffer"],
    ['export const now = () => Date.now();', 'reads the clock (Date.now)'],
    ['export const today = () => new Date().toISOString();', 'reads the clock (new Date())'],
  ])('finds %s', (text, finding) => {
    expect(impurities(file, text).join('\n')).toContain(finding);
  });

  it('lets pure code through, names that only look like globals included', () => {
    const text = [
      "import { z } from 'zod';",
      "import { toCents } from './money';",
      '// process.env and Date.now() in a comment, Buffer too',
      "export const note = 'Date.now() and process.env in a string';",
      'export const at = (ms: number) => new Date(ms).toISOString();',
      'export const shape = { process: 1, Buffer: 2 };',
      'export const read = (job: { process: number }) => job.process;',
    ].join('\n');
    expect(impurities(file, text)).toEqual([]);
  });
});
