// `npm run build`: one bundle for the Functions host (package.json "main"), plus its metafile.
import { build } from 'esbuild';

const result = await build({
  entryPoints: ['functions/index.ts'],
  outfile: 'dist/main.js',
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
});
const bytes = Object.values(result.metafile.outputs).find((output) => output.entryPoint)?.bytes ?? 0;
console.log(`dist/main.js: ${(bytes / 1024).toFixed(0)} KiB`);
