// `npm run build`: the app for the Functions host, in dist/ (package.json "main": dist/main.js).
// `--bench` also bundles the benchmark's server, so it measures the same bundled code Azure runs.
//
// dist/main.js is the app's code and what loading the functions needs. The large packages it reaches
// only on first use (through `import()` or a `require` inside the function that needs them) are files
// of their own in dist/vendor/, read when that first use comes: a cold start parses none of them.
// Each is one package with its dependencies, so no class of the app's own is ever in two files.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
/** The pages' browser files, under dist/ (web/portal/assets.ts reads them there, told by WEB_ASSETS_DIR). */
const webAssetsDir = 'web';

/** dist/vendor/<file>: the packages each holds, by the name its exports give each. */
const vendorFiles = {
  // The EVM adapter (the chain routes) and the SIWE parser, which checks signatures with it.
  'ethers.cjs': { ethers: 'ethers' },
  'siwe.cjs': { siwe: 'siwe' },
  // Connected when the app first builds its dependencies (the first call), not when it loads.
  'azure-data.cjs': { '@azure/cosmos': 'cosmos', '@azure/storage-queue': 'storageQueue' },
  // API Management's key issuer, the managed identity's token source, the session tokens.
  'azure-apim.cjs': { '@azure/arm-apimanagement': 'apim' },
  'azure-identity.cjs': { '@azure/identity': 'identity' },
  'jsonwebtoken.cjs': { jsonwebtoken: 'jsonwebtoken' },
  // The QR codes of the payment page.
  'qrcode.cjs': { qrcode: 'qrcode' },
  // x402 (the protocol's packages and viem beneath them), read on the first paid call: one file, so
  // that the EVM scheme, the facilitator and the encodings share one copy of the protocol's code.
  'x402.cjs': {
    '@x402/core/facilitator': 'facilitator',
    '@x402/core/http': 'http',
    '@x402/core/schemas': 'schemas',
    '@x402/evm/exact/facilitator': 'exactEvmFacilitator',
    '@x402/evm/v1': 'evmV1',
    '@x402/extensions/sign-in-with-x': 'signInWithX',
    viem: 'viem',
    'viem/accounts': 'viemAccounts',
    'viem/chains': 'viemChains',
  },
};
const vendorOf = new Map(Object.entries(vendorFiles).flatMap(([file, packages]) => Object.entries(packages).map(([name, key]) => [name, { file, key }])));

const bundleOptions = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: true,
  sourcemap: true,
  // The Functions worker provides this module at run time.
  external: ['@azure/functions-core'],
  // Some dependencies are ES modules that read import.meta.url; give them the bundle's own URL.
  // WEB_ASSETS_DIR: the built app serves the pages' files from dist/ (and bundles no esbuild).
  define: { 'import.meta.url': 'importMetaUrl', WEB_ASSETS_DIR: JSON.stringify(webAssetsDir) },
  banner: { js: "const importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  metafile: true,
  logLevel: 'warning',
};

/**
 * Imports of the vendored packages (other than `own`, the file being built) become a `require` of
 * their file in dist/vendor/, `from` the directory of the file being built. The require runs where
 * the import was evaluated: inside a lazily imported module, or the function that requires it.
 */
const vendored = (from, own = {}) => ({
  name: 'vendored-packages',
  setup(build) {
    build.onResolve({ filter: /^[@a-z]/ }, (args) => {
      const vendor = vendorOf.get(args.path);
      if (!vendor || args.path in own) return undefined;
      return { path: args.path, namespace: 'vendored' };
    });
    build.onResolve({ filter: /\.cjs$/, namespace: 'vendored' }, (args) => ({ path: args.path, external: true }));
    build.onLoad({ filter: /.*/, namespace: 'vendored' }, (args) => {
      const { file, key } = vendorOf.get(args.path);
      return { contents: `module.exports = require(${JSON.stringify(`${from}${file}`)}).${key};`, loader: 'js' };
    });
  },
});

/**
 * zod's translations of its error messages: the app keeps the default (English), so the other
 * locales (two thirds of zod's code) are left out; naming one throws, saying so.
 */
const englishOnlyZod = {
  name: 'english-only-zod',
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => {
      const lines = readFileSync(args.path, 'utf8').split('\n');
      const exported = lines.map((line) => /^export \{ default as (\w+) \} from "\.\/([\w-]+)\.js";$/.exec(line)).filter(Boolean);
      // An index this plugin does not recognise is bundled as it is.
      if (exported.length === 0 || exported.length !== lines.filter((line) => line.trim()).length) return undefined;
      const contents = [
        "const leftOut = (name) => () => { throw new Error(`zod locale ${name}: left out of the bundle (scripts/build.mjs)`); };",
        ...exported.map(([, name, file]) => (name === 'en' ? `export { default as en } from "./${file}.js";` : `export const ${name} = leftOut('${name}');`)),
      ].join('\n');
      return { contents, loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

// dist/vendor/ is rebuilt whole: a file no longer vendored does not linger in the package.
rmSync(join(dist, 'vendor'), { recursive: true, force: true });

const vendorBuilds = Object.entries(vendorFiles).map(([file, packages]) =>
  build({
    ...bundleOptions,
    // The packages' ES module builds, as the app's own imports would have them.
    stdin: {
      contents: Object.entries(packages)
        .map(([name, key]) => `export * as ${key} from ${JSON.stringify(name)};`)
        .join('\n'),
      resolveDir: root,
      sourcefile: `vendor/${file.replace(/\.cjs$/, '.mjs')}`,
      loader: 'js',
    },
    outfile: join(dist, 'vendor', file),
    plugins: [vendored('./', packages), englishOnlyZod],
  }),
);
const appBuild = build({
  ...bundleOptions,
  entryPoints: ['functions/index.ts'],
  outfile: join(dist, 'main.js'),
  plugins: [vendored('./vendor/'), englishOnlyZod],
});
const outputs = Object.assign({}, ...(await Promise.all([appBuild, ...vendorBuilds])).map((result) => result.metafile.outputs));

// The OpenAPI documents (dist/ and, for API Management, infra/) come from the same route table.
execFileSync('node_modules/.bin/tsx', ['scripts/openapi.ts', ...process.argv.filter((arg) => arg === '--dist-only')], { cwd: root, stdio: 'inherit' });
// The portal's and the console's scripts and stylesheets, content-hashed, with their manifests.
execFileSync('node_modules/.bin/tsx', ['scripts/build-portal.ts', webAssetsDir], { cwd: root, stdio: 'inherit' });

const kib = (bytes) => `${(bytes / 1024).toFixed(0)} KiB`;
const sizeOf = (filter) =>
  Object.entries(outputs)
    .filter(([file]) => !file.endsWith('.map') && filter(file))
    .reduce((sum, [, output]) => sum + output.bytes, 0);
console.log(`dist/main.js: ${kib(sizeOf((file) => file === 'dist/main.js'))}; dist/vendor/, read on first use: ${kib(sizeOf((file) => file.startsWith('dist/vendor/')))}`);

if (process.argv.includes('--bench')) {
  await build({
    ...bundleOptions,
    entryPoints: ['scripts/bench/server.ts'],
    outfile: join(dist, 'bench-server.js'),
    // The local stand-ins stay packages: they are development dependencies, not part of the app.
    external: [...bundleOptions.external, 'azurite', '@vercel/cosmosdb-server'],
    // The app's packages read from dist/vendor/, as dist/main.js reads them.
    plugins: [vendored('./vendor/'), englishOnlyZod],
  });
}
