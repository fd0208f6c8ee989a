/** The words the CLI's first file (./launch.ts) answers itself (./quick.ts); anything else goes to the full command line. */

/** Global options `status` takes there. */
const QUICK_OPTIONS: ReadonlySet<string> = new Set(['--json', '--debug']);

export type Quick = 'status' | 'version';

/** What `args` (the words after `hermesd`) asks that the first file answers itself, if anything. */
export function quickCommand(args: readonly string[]): Quick | undefined {
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) return 'version';
  const words = args.filter((a) => !QUICK_OPTIONS.has(a));
  return words.length === 1 && words[0] === 'status' ? 'status' : undefined;
}
