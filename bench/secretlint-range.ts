/**
 * The peer of `hermesd check --commits` a JavaScript user would reach for, as that user would run
 * it over a range of commits: secretlint (`@secretlint/core` with
 * `@secretlint/secretlint-rule-preset-recommend`, the versions in package.json) has no git-history
 * mode, so this program reads ONE `git log -p -U0 <range>` stream (the grep floor's stream of
 * bench/commits.ts: merges not diffed; no context lines) and lints what each commit adds to each
 * file, its added lines as one source under that file's path (secretlint's rules read the path:
 * `.env` files, key files), one commit and file after another. It runs as a process of its own,
 * `node dist/bench/secretlint-range.js <range>` in the repository, so its time holds Node's start
 * and secretlint's loading, as hermesd's does. Prints `<commits> <files linted> <findings>`.
 *
 * secretlint's profiler is turned off (Node's `performance.mark` made a no-op in this process): it
 * keeps every mark it sees and searches them all at each new one, so over many sources its cost
 * grows with the square of their number (over ~700 commits of pallets/flask, 94% of the run's
 * time: 3.9 s with it, against the figure the bench shows without). The figure is secretlint's
 * linting, at its best.
 */
import { spawn } from 'node:child_process';
import { extname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { lintSource } from '@secretlint/core';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';

performance.mark = (() => undefined) as unknown as typeof performance.mark; // secretlint's profiler, off (above)

const CONFIG = { rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: recommended }] };
/** Starts each commit's lines in the stream (a byte no patch line starts with). */
const COMMIT_MARK = '\x01';

const range = process.argv[2];
if (!range) {
  process.stderr.write('usage: node dist/bench/secretlint-range.js <range>\n');
  process.exit(2);
}

const git = spawn(
  'git',
  ['-c', 'core.quotePath=false', 'log', '-p', '-U0', '--no-color', '--no-ext-diff', '--no-textconv', `--format=${COMMIT_MARK}%H`, range, '--'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const exited = new Promise<number | null>((resolve) => git.on('close', resolve));

let commits = 0;
let files = 0;
let findings = 0;
let path: string | undefined;
let added: string[] = [];
let inHunk = false;

async function lintFile(): Promise<void> {
  if (path !== undefined && added.length > 0) {
    const r = await lintSource({
      source: { filePath: path, content: added.join('\n') + '\n', ext: extname(path), contentType: 'text' },
      options: { config: CONFIG },
    });
    files++;
    findings += r.messages.length;
  }
  path = undefined;
  added = [];
  inHunk = false;
}

for await (const line of createInterface({ input: git.stdout, crlfDelay: Infinity })) {
  if (line.startsWith(COMMIT_MARK)) {
    await lintFile();
    commits++;
  } else if (line.startsWith('diff ')) {
    await lintFile();
  } else if (inHunk && line.startsWith('+')) {
    added.push(line.slice(1));
  } else if (line.startsWith('@@')) {
    inHunk = true;
  } else if (!inHunk && line.startsWith('+++ ')) {
    const name = line.slice(4).replace(/\t$/, ''); // git ends a name that holds a space with a TAB
    path = name === '/dev/null' ? undefined : name.replace(/^b\//, '');
  }
}
await lintFile();
const code = await exited;
if (code !== 0) {
  process.stderr.write(`git log exited ${code}\n`);
  process.exit(2);
}
process.stdout.write(`${commits} ${files} ${findings}\n`);
