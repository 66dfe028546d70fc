/**
 * The local chain's saved state (`.data/chain-state.json`), written so that a crash at any moment
 * leaves the last good one. anvil's own dumps (`--state`, `--dump-state`, `--state-interval`)
 * truncate the file and write it in place: a stack killed mid-dump left half a file that anvil then
 * refused at every start. Here anvil only reads (`--load-state`); the stack asks it for its state
 * (`anvil_dumpState`), writes that to a temporary file and renames it over the saved one, after
 * keeping the saved one as the previous good copy. A start that cannot load the saved state goes
 * back to that copy, and says so.
 */
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { AnvilStateRejected, startAnvil, type RunningAnvil } from './anvil';

export interface ChainStateFiles {
  /** The last save. */
  current: string;
  /** The save before it: where a start goes when `current` cannot be loaded. */
  previous: string;
  /** A save being written; renamed over `current` once whole. */
  temporary: string;
}

export const chainStateFiles = (file: string): ChainStateFiles => ({
  current: file,
  previous: file.replace(/(\.json)?$/, '.previous.json'),
  temporary: `${file}.tmp`,
});

/** Where a file anvil refused is kept once a start has gone past it (never deleted: it may be all there is). */
export const unreadableCopy = (file: string) => file.replace(/(\.json)?$/, '.unreadable.json');

/** `text` in `file`, flushed to disk before the rename that makes it the saved state. */
const writeFlushed = (file: string, text: string) => {
  const fd = openSync(file, 'w');
  try {
    writeFileSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
};

/**
 * Saves `text` (a `dumpState`): whole into the temporary file, the saved state copied to the previous
 * copy (through a rename of its own), then the temporary file renamed over the saved state. A crash
 * at any step leaves both files whole: the older ones, or the newer ones.
 */
export const writeChainState = (file: string, text: string) => {
  const files = chainStateFiles(file);
  mkdirSync(dirname(file), { recursive: true });
  writeFlushed(files.temporary, text);
  if (existsSync(files.current)) {
    const { atime, mtime } = statSync(files.current);
    copyFileSync(files.current, `${files.previous}.tmp`);
    // Its time stays that of its save: a start that goes back to it says when that was.
    utimesSync(`${files.previous}.tmp`, atime, mtime);
    renameSync(`${files.previous}.tmp`, files.previous);
  }
  renameSync(files.temporary, files.current);
};

export interface SavedChainOptions {
  /** The saved state: loaded at start when it exists, saved every `saveEveryMs` and on close. */
  file: string;
  saveEveryMs: number;
  /**
   * Whether the store beside the chain names nothing on it yet (no split, no deposit address): only
   * then may a start with no loadable state begin a fresh chain, which could not contradict it.
   */
  storeIsFresh: boolean;
  log: (line: string) => void;
}

const tryLoad = async (file: string): Promise<RunningAnvil | AnvilStateRejected> => {
  try {
    return await startAnvil({ loadState: file });
  } catch (error) {
    if (error instanceof AnvilStateRejected) return error;
    throw error;
  }
};

/** anvil on the saved state, the previous copy when the saved state cannot be loaded, or a fresh chain when the store allows it. */
const startFromSaved = async ({ file, storeIsFresh, log }: SavedChainOptions): Promise<RunningAnvil> => {
  const files = chainStateFiles(file);
  // The first start: nothing saved yet.
  if (!existsSync(files.current) && !existsSync(files.previous)) return startAnvil();
  const current = existsSync(files.current) ? await tryLoad(files.current) : undefined;
  if (current && !(current instanceof AnvilStateRejected)) return current;
  const why = current ? current.reason : 'it is missing';
  const previous = existsSync(files.previous) ? await tryLoad(files.previous) : undefined;
  if (previous && !(previous instanceof AnvilStateRejected)) {
    // Aside before the next save: it would otherwise be copied over the good previous copy.
    if (current) renameSync(files.current, unreadableCopy(files.current));
    const savedAt = statSync(files.previous).mtime.toISOString();
    log(`the local chain's saved state ${files.current} could not be read (${why}): started from the last good copy ${basename(files.previous)}, saved at ${savedAt}; chain changes after it are lost${current ? ` (kept aside: ${basename(unreadableCopy(files.current))})` : ''}`);
    return previous;
  }
  const lost = `the local chain's saved state ${files.current} could not be read (${why})${previous ? `, nor its previous copy (${previous.reason})` : ''}, and no earlier good copy is left`;
  if (!storeIsFresh) {
    // Nothing is moved: the files stay as they were for whoever puts a good copy back.
    throw new Error(
      `${lost}. The store names split contracts on that chain, which a fresh chain would not have: put a good copy of the chain back as ${files.current}, or delete ${dirname(files.current)} to start over (this drops the local keys, receipts and settings).`,
    );
  }
  const rejected = [current, previous].filter((each) => each !== undefined);
  for (const each of rejected) renameSync(each.file, unreadableCopy(each.file));
  log(`${lost}; the store is empty too, so a fresh chain starts (kept aside: ${rejected.map((each) => basename(unreadableCopy(each.file))).join(', ')})`);
  return startAnvil();
};

/**
 * The local chain, started from its saved state (see above) and saved every `saveEveryMs` while it
 * changes, and once more on close before anvil stops.
 */
export const startSavedChain = async (options: SavedChainOptions): Promise<RunningAnvil> => {
  const anvil = await startFromSaved(options);
  let saved: string | undefined;
  const save = async () => {
    const text = await anvil.dumpState();
    if (text === saved) return;
    writeChainState(options.file, text);
    saved = text;
  };
  let saving = Promise.resolve();
  const saveNext = () => (saving = saving.then(save).catch((error: unknown) => options.log(`saving the chain failed: ${String(error)}`)));
  const saver = setInterval(saveNext, options.saveEveryMs);
  saver.unref();

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      clearInterval(saver);
      await saveNext();
      await anvil.close();
    })());
  return { ...anvil, close };
};
