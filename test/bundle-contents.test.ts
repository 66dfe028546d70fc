/**
 * What the Functions bundle (`npm run build`, from functions/index.ts) carries of this repository:
 * the functions, shared/ and the contracts the service deploys; never the local stack, the scripts,
 * the tests or the local chain's test tokens. Packages are left out here (the build places them in
 * dist/vendor/); the repository's own modules are bundled as the build bundles them.
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
      logLevel: 'silent',
    });
    const [output] = Object.values(result.metafile.outputs);
    const bundled = Object.entries(output!.inputs)
      .filter(([, input]) => input.bytesInOutput > 0)
      .map(([file]) => file);
    expect(bundled).toContain('shared/adapters/system/runtime.ts');
    // Beside functions/ and shared/: the split contracts (not the test tokens) and package.json (the version).
    const others = bundled.filter((file) => !/^(functions|shared)\//.test(file) && file !== 'package.json');
    expect(others.sort()).toEqual(['contracts/artifacts/Split.json', 'contracts/artifacts/SplitFactory.json']);
    // Not even parsed: nothing the app imports reaches the local stack or the scripts.
    expect(Object.keys(result.metafile.inputs).filter((file) => /^(scripts|test)\//.test(file))).toEqual([]);
  });
});
