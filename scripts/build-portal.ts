/**
 * `npm run build` (scripts/build.mjs) runs this with the folder under dist/ it names to the app
 * (PORTAL_ASSETS_DIR): the portal's browser files, content-hashed, and the manifest that names them,
 * where web/portal/assets.ts finds them in the built app. The folder is written anew: no stale hashed
 * file lingers in the package.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { MANIFEST_FILE } from '../web/portal/assets';
import { bundlePortalAssets } from '../web/portal/bundle';

const main = async () => {
  const [relative] = process.argv.slice(2);
  if (!relative) throw new Error('usage: tsx scripts/build-portal.ts <folder under dist/>');
  const dir = resolve(__dirname, '..', 'dist', relative);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const { manifest, files } = await bundlePortalAssets();
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
  writeFileSync(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  const sizes = Object.entries(files).map(([name, body]) => `${name} ${body.byteLength} B (${gzipSync(body, { level: 9 }).byteLength} B gzipped)`);
  console.log(`dist/${relative}/: ${sizes.join('; ')}`);
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
