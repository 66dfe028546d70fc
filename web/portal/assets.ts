/**
 * The portal's browser files, by name. The built app reads them from the files the build wrote
 * beside it (dist/web/portal/, named by manifest.json); run from source (`npm start`, the tests) they
 * are bundled in memory once, on first use, so nothing has to be built first. Only names from the
 * manifest are ever served: a request names a file, never a path.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AssetManifest, BundledAssets } from './bundle';

/** Set by the build (scripts/build.mjs): where the built files are, relative to the bundle. */
declare const PORTAL_ASSETS_DIR: string | undefined;

/** Content-hashed names never change content: cached for a year, never revalidated. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

const contentTypes: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

export interface AssetFile {
  contentType: string;
  body: Uint8Array;
}

export interface PortalAssets {
  manifest: AssetManifest;
  files: ReadonlyMap<string, AssetFile>;
}

export const MANIFEST_FILE = 'manifest.json';

const toAssets = ({ manifest, files }: BundledAssets): PortalAssets => ({
  manifest,
  files: new Map(
    [manifest.script, manifest.style].map((name) => {
      const body = files[name];
      if (!body) throw new Error(`the portal manifest names ${name}, which is missing`);
      return [name, { contentType: contentTypes[name.split('.').pop() ?? ''] ?? 'application/octet-stream', body }];
    }),
  ),
});

const readBuilt = (dir: string): BundledAssets => {
  const manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as AssetManifest;
  const files = Object.fromEntries([manifest.script, manifest.style].map((name) => [name, new Uint8Array(readFileSync(join(dir, name)))]));
  return { manifest, files };
};

let loading: Promise<PortalAssets> | undefined;

/** The portal's files: read (or bundled) once per process; a failure is tried again on the next call. */
export const portalAssets = (): Promise<PortalAssets> =>
  (loading ??= (typeof PORTAL_ASSETS_DIR === 'string' ? Promise.resolve(readBuilt(join(__dirname, PORTAL_ASSETS_DIR))) : import('./bundle').then((module) => module.bundlePortalAssets()))
    .then(toAssets)
    .catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
