/**
 * How a page family's browser files are made (the portal's, the console's): the script (its entry and
 * what it imports) and the stylesheet, minified, under content-hashed names so that they can be
 * cached for a year. Used by the build (scripts/build-portal.ts, into dist/) and, where no build
 * exists (`npm start`, the tests), once on first use in memory. Never part of the Functions bundle: it
 * needs esbuild.
 */
import { basename, resolve } from 'node:path';
import { build } from 'esbuild';
import type { WebEntry } from './assets';

export interface AssetManifest {
  /** File names (no directory) of the script and the stylesheet. */
  script: string;
  style: string;
}

export interface BundledAssets {
  manifest: AssetManifest;
  files: Record<string, Uint8Array>;
}

const root = resolve(__dirname, '../..');

/** Browsers the page supports: those with EIP-1193 wallets (BigInt, optional chaining, `:has` optional). */
const TARGETS = ['es2020', 'chrome91', 'firefox90', 'safari15', 'edge91'];

export const bundleWebAssets = async (entry: WebEntry): Promise<BundledAssets> => {
  const result = await build({
    absWorkingDir: root,
    entryPoints: [
      { in: entry.script, out: entry.name },
      { in: entry.style, out: entry.name },
    ],
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: TARGETS,
    entryNames: '[name]-[hash]',
    outdir: `${entry.name}-assets`,
    write: false,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'warning',
  });
  const files = Object.fromEntries(result.outputFiles.map((file) => [basename(file.path), file.contents]));
  const names = Object.keys(files);
  const script = names.find((name) => name.endsWith('.js'));
  const style = names.find((name) => name.endsWith('.css'));
  if (!script || !style) throw new Error(`the ${entry.name} bundle lacks its script or stylesheet: ${names.join(', ')}`);
  return { manifest: { script, style }, files };
};
