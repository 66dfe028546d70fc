/**
 * What the Functions bundle (`npm run build`, from functions/index.ts) carries of this repository:
 * the functions, shared/, the portal's server side (web/, not its browser script or the bundler that
 * makes it) and the contracts the service deploys; never the local stack, the scripts, the tests or
 * the local chain's test tokens. Packages are left out here (the build places them in dist/vendor/);
 * the repository's own modules are bundled as the build bundles them (WEB_ASSETS_DIR as the build
 * defines it: the built app reads the pages' files from dist/).
 */
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/source-imports';

describe('the Functions bundle', () => {
  it('holds the functions, shared/ and the split contracts, and nothing only development uses', async () => {
    const result = await build({
      absWorkingDir: repoRoot,
      entryPoints: ['functions/index.ts'],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      packages: 'external',
      write: false,
      outfile: 'bundle.js',
      metafile: true,
      define: { WEB_ASSETS_DIR: '"web"' },
      logLevel: 'silent',
    });
    const [output] = Object.values(result.metafile.outputs);
    const bundled = Object.entries(output!.inputs)
      .filter(([, input]) => input.bytesInOutput > 0)
      .map(([file]) => file);
    expect(bundled).toContain('shared/adapters/system/runtime.ts');
    // Beside functions/ and shared/: the split and deposit contracts (not the test tokens) and package.json (the version).
    const others = bundled.filter((file) => !/^(functions|shared|web)\//.test(file) && file !== 'package.json');
    expect(others.sort()).toEqual(['contracts/artifacts/DepositFactory.json', 'contracts/artifacts/Split.json', 'contracts/artifacts/SplitFactory.json']);
    expect(bundled).toContain('web/portal/render.ts');
    // Not even parsed: nothing the app imports reaches the local stack, the scripts, the pages'
    // browser scripts or their bundler.
    const parsed = Object.keys(result.metafile.inputs);
    expect(parsed.filter((file) => /^(scripts|test)\//.test(file) || file === 'web/portal/client.ts' || file === 'web/admin/client.ts' || file.startsWith('web/admin/client/') || file === 'web/portal/bundle.ts')).toEqual([]);
  });
});
