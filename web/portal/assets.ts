/**
 * The browser files of a page family (the buyer's portal, the merchant console), by name. The built
 * app reads them from the files the build wrote beside it (dist/web/<entry>/, named by manifest.json);
 * run from source (`npm start`, the tests) they are bundled in memory once, on first use, so nothing
 * has to be built first. Only names from the manifest are ever served: a request names a file, never
 * a path.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AssetManifest, BundledAssets } from './bundle';

/** Set by the build (scripts/build.mjs): where the built browser files are, relative to the bundle. */
declare const WEB_ASSETS_DIR: string | undefined;

/** Content-hashed names never change content: cached for a year, never revalidated. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

/** One page family's browser files: a script entry and a stylesheet, built into dist/web/<name>/. */
export interface WebEntry {
  /** The folder under dist/web/ and the prefix of the hashed file names. */
  name: string;
  /** Repository paths of the script entry and the stylesheet. */
  script: string;
  style: string;
}

export const PORTAL_ENTRY: WebEntry = { name: 'portal', script: 'web/portal/client.ts', style: 'web/portal/portal.css' };
export const ADMIN_ENTRY: WebEntry = { name: 'admin', script: 'web/admin/client.ts', style: 'web/admin/admin.css' };
/** Every entry the build writes. */
export const WEB_ENTRIES: readonly WebEntry[] = [PORTAL_ENTRY, ADMIN_ENTRY];

const contentTypes: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

export interface AssetFile {
  contentType: string;
  body: Uint8Array;
}

export interface WebAssets {
  manifest: AssetManifest;
  files: ReadonlyMap<string, AssetFile>;
}
/** The portal's files (the name it had before the console shared the mechanism). */
export type PortalAssets = WebAssets;

export const MANIFEST_FILE = 'manifest.json';

const toAssets = (entry: WebEntry, { manifest, files }: BundledAssets): WebAssets => ({
  manifest,
  files: new Map(
    [manifest.script, manifest.style].map((name) => {
      const body = files[name];
      if (!body) throw new Error(`the ${entry.name} manifest names ${name}, which is missing`);
      return [name, { contentType: contentTypes[name.split('.').pop() ?? ''] ?? 'application/octet-stream', body }];
    }),
  ),
});

const readBuilt = (dir: string): BundledAssets => {
  const manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as AssetManifest;
  const files = Object.fromEntries([manifest.script, manifest.style].map((name) => [name, new Uint8Array(readFileSync(join(dir, name)))]));
  return { manifest, files };
};

const loading = new Map<string, Promise<WebAssets>>();

/** An entry's files: read (or bundled) once per process; a failure is tried again on the next call. */
export const webAssets = (entry: WebEntry): Promise<WebAssets> => {
  let pending = loading.get(entry.name);
  if (!pending) {
    pending = (typeof WEB_ASSETS_DIR === 'string' ? Promise.resolve(readBuilt(join(__dirname, WEB_ASSETS_DIR, entry.name))) : import('./bundle').then((module) => module.bundleWebAssets(entry)))
      .then((bundled) => toAssets(entry, bundled))
      .catch((error: unknown) => {
        loading.delete(entry.name);
        throw error;
      });
    loading.set(entry.name, pending);
  }
  return pending;
};

/** The portal's files. */
export const portalAssets = (): Promise<WebAssets> => webAssets(PORTAL_ENTRY);
