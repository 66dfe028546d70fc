// `npm run build`: one bundle for the Functions host (package.json "main").
// `--bench` also bundles the benchmark's server, so it measures the same bundled code Azure runs.
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';

const bundleOptions = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: true,
  sourcemap: true,
  // The Functions worker provides this module at run time.
  external: ['@azure/functions-core'],
  // Some dependencies are ES modules that read import.meta.url; give them the bundle's own URL.
  define: { 'import.meta.url': 'importMetaUrl' },
  banner: { js: "const importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  metafile: true,
  logLevel: 'warning',
};

const result = await build({ ...bundleOptions, entryPoints: ['functions/index.ts'], outfile: 'dist/main.js' });
// The OpenAPI documents (dist/ and, for API Management, infra/) come from the same route table.
execFileSync('node_modules/.bin/tsx', ['scripts/openapi.ts', ...process.argv.filter((arg) => arg === '--dist-only')], { stdio: 'inherit' });

const bytes = Object.values(result.metafile.outputs).find((output) => output.entryPoint)?.bytes ?? 0;
console.log(`dist/main.js: ${(bytes / 1024).toFixed(0)} KiB`);

if (process.argv.includes('--bench')) {
  await build({
    ...bundleOptions,
    entryPoints: ['scripts/bench/server.ts'],
    outfile: 'dist/bench-server.js',
    // The local stand-ins stay packages: they are development dependencies, not part of the app.
    external: [...bundleOptions.external, 'azurite', '@vercel/cosmosdb-server'],
  });
}
