/**
 * What the command-line scripts share: `--help` (usage on stdout, exit 0), bad usage (the problem
 * and the usage on stderr, exit 2), and failures (the message on stderr, exit 1).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Bad usage: an unknown flag, a missing or unexpected argument, a value of the wrong form. */
export class UsageError extends Error {}

/** `--help` or `-h` anywhere: the script prints its usage and does nothing else. */
class HelpRequested extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses the command line strictly; `--help`/`-h` is always known. */
export const parseCommandLine = <O extends Options>(options: O, args: string[] = process.argv.slice(2)) => {
  const end = args.indexOf('--');
  const flags = end === -1 ? args : args.slice(0, end);
  if (flags.includes('--help') || flags.includes('-h')) throw new HelpRequested();
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    // node's own wording, without its advice on passing '--x' as a positional argument
    throw new UsageError((error instanceof Error ? error.message : String(error)).split('. To specify')[0]!);
  }
};

/** Runs a script's main with the exit statuses above. */
export const runCli = (usage: string, main: () => Promise<void>, report: (error: unknown) => void = (error) => console.error(error instanceof Error ? error.message : String(error))) => {
  main().catch((error: unknown) => {
    if (error instanceof HelpRequested) {
      process.stdout.write(`${usage}\n`);
      process.exitCode = 0;
    } else if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${usage}\n`);
      process.exitCode = 2;
    } else {
      report(error);
      process.exit(1);
    }
  });
};
