// `npm run contracts:build`: compiles every contract under contracts/ with solc-js (the compiler
// version is the one package-lock pins, so the output is reproducible) and writes
// contracts/artifacts/<Name>.json = {contractName, abi, bytecode}. The artifacts are committed: the
// service and its bundle read them without a compiler.
//   --out <dir>  write there instead (the artifact test compiles afresh and compares)
//   --check      write nothing; exit 1 when the committed artifacts differ from a fresh compile
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const contractsDir = join(root, 'contracts');
const defaultOut = join(contractsDir, 'artifacts');
const require = createRequire(join(root, 'package.json'));
const solc = require('solc');

const solidityFiles = (dir) =>
  readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return path === defaultOut ? [] : solidityFiles(path);
      return entry.name.endsWith('.sol') ? [path] : [];
    });

// Source unit names are repository-relative (and package names for libraries), never absolute paths:
// they are hashed into the bytecode's metadata, which must not depend on where the checkout lives.
const unitName = (path) => relative(root, path).split(sep).join('/');

const findImports = (path) => {
  try {
    const file = path.startsWith('contracts/') ? join(root, path) : require.resolve(path);
    return { contents: readFileSync(file, 'utf8') };
  } catch {
    return { error: `not found: ${path}` };
  }
};

/** Object keys sorted at every level, so the files do not change with the compiler's key order. */
const canonical = (value) => {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical(value[key])]));
  }
  return value;
};

export const compileContracts = () => {
  const ours = solidityFiles(contractsDir).map(unitName);
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(ours.map((name) => [name, { content: readFileSync(join(root, name), 'utf8') }])),
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      outputSelection: Object.fromEntries(ours.map((name) => [name, { '*': ['abi', 'evm.bytecode.object'] }])),
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const problems = output.errors ?? [];
  // Library warnings (OpenZeppelin's note on transient storage, say) are not ours to act on.
  const shown = problems.filter((problem) => problem.severity === 'error' || ours.includes(problem.sourceLocation?.file));
  for (const problem of shown) console.error(problem.formattedMessage);
  if (problems.some((problem) => problem.severity === 'error')) throw new Error('solc: compilation failed');

  const artifacts = new Map();
  for (const name of ours) {
    for (const [contractName, contract] of Object.entries(output.contracts[name] ?? {})) {
      // Interfaces and abstract contracts have no bytecode and nothing to deploy.
      if (!contract.evm.bytecode.object) continue;
      if (artifacts.has(contractName)) throw new Error(`two contracts named ${contractName}: artifact names must be unique`);
      const artifact = { contractName, abi: canonical(contract.abi), bytecode: `0x${contract.evm.bytecode.object}` };
      artifacts.set(contractName, `${JSON.stringify(artifact, null, 2)}\n`);
    }
  }
  return new Map([...artifacts].sort(([a], [b]) => a.localeCompare(b)));
};

const readDir = (dir) => {
  try {
    return new Map(
      readdirSync(dir)
        .filter((file) => file.endsWith('.json'))
        .map((file) => [file.slice(0, -'.json'.length), readFileSync(join(dir, file), 'utf8')]),
    );
  } catch {
    return new Map();
  }
};

const main = () => {
  const args = process.argv.slice(2);
  const outIndex = args.indexOf('--out');
  const outDir = outIndex >= 0 ? resolve(args[outIndex + 1] ?? '') : defaultOut;
  const started = Date.now();
  const artifacts = compileContracts();
  const existing = readDir(outDir);

  if (args.includes('--check')) {
    const stale = [...new Set([...artifacts.keys(), ...existing.keys()])].filter((name) => artifacts.get(name) !== existing.get(name));
    if (stale.length > 0) {
      console.error(`contract artifacts out of date: ${stale.join(', ')} (run npm run contracts:build)`);
      process.exit(1);
    }
    console.log(`contract artifacts up to date (${artifacts.size})`);
    return;
  }

  mkdirSync(outDir, { recursive: true });
  for (const name of existing.keys()) if (!artifacts.has(name)) rmSync(join(outDir, `${name}.json`));
  for (const [name, text] of artifacts) if (existing.get(name) !== text) writeFileSync(join(outDir, `${name}.json`), text);
  console.log(`${[...artifacts.keys()].join(', ')} -> ${relative(root, outDir) || '.'} (${Date.now() - started} ms)`);
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
