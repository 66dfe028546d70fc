import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Every file under `dir` (relative to the repository) that `keep` accepts, keyed by its path below `dir` with forward slashes. */
export const readTree = (dir: string, keep: (path: string) => boolean): Record<string, string> => {
  const base = join(repoRoot, dir);
  const files: Record<string, string> = {};
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else {
        const path = relative(base, full).split(sep).join('/');
        if (keep(path)) files[path] = readFileSync(full, 'utf8');
      }
    }
  };
  walk(base);
  return files;
};

/** The templates and what they load (prose such as README.md is not part of a deployment). */
export const readInfraFiles = () => readTree('infra', (path) => /\.(bicep|bicepparam|json|xml)$/.test(path));

export const readPolicyFiles = () => readTree('infra/policies', (path) => path.endsWith('.xml'));

/** A copy of `files` with `from` replaced in one file; fails when `from` is not there, so the copy is really broken. */
export const brokenCopy = (files: Record<string, string>, file: string, from: string | RegExp, to = ''): Record<string, string> => {
  const text = files[file];
  if (text === undefined) throw new Error(`${file} is not in the set`);
  const changed = text.replace(from, to);
  if (changed === text) throw new Error(`${file} does not contain ${String(from)}`);
  return { ...files, [file]: changed };
};
