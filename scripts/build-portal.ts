/**
 * `npm run build` (scripts/build.mjs) runs this with the folder under dist/ it names to the app
 * (WEB_ASSETS_DIR): each page family's browser files (the portal's, the console's), content-hashed,
 * and the manifest that names them, in a folder of its own (dist/web/<entry>/), where
 * web/portal/assets.ts finds them in the built app. The folder is written anew: no stale hashed file
 * lingers in the package.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { MANIFEST_FILE, WEB_ENTRIES } from '../web/portal/assets';
import { bundleWebAssets } from '../web/portal/bundle';

const main = async () => {
  const [relative] = process.argv.slice(2);
  if (!relative) throw new Error('usage: tsx scripts/build-portal.ts <folder under dist/>');
  const root = resolve(__dirname, '..', 'dist', relative);
  rmSync(root, { recursive: true, force: true });
  for (const entry of WEB_ENTRIES) {
    const dir = join(root, entry.name);
    mkdirSync(dir, { recursive: true });
    const { manifest, files } = await bundleWebAssets(entry);
    for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
    writeFileSync(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    const sizes = Object.entries(files).map(([name, body]) => `${name} ${body.byteLength} B (${gzipSync(body, { level: 9 }).byteLength} B gzipped)`);
    console.log(`dist/${relative}/${entry.name}/: ${sizes.join('; ')}`);
  }
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
