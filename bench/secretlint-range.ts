// The peer a JS user would reach for: secretlint (preset-recommend) over what a range of commits
// adds — `git log -p <range>`'s added lines, read once, judged in one lintSource call (as
// `git log -p | secretlint --stdinFileName …` would). Prints the number of findings.
//   node dist/bench/secretlint-range.js <repo> <range>   (bench/commits.ts runs it)
import { spawn } from 'node:child_process';
import { lintSource } from '@secretlint/core';
import { creator as recommend } from '@secretlint/secretlint-rule-preset-recommend';

const [repo, range] = process.argv.slice(2) as [string, string];
const git = spawn('git', ['log', '-p', '--no-color', '--no-ext-diff', range], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] });
const added: string[] = [];
let rest = '';
git.stdout.setEncoding('utf8');
git.stdout.on('data', (d: string) => {
  const lines = (rest + d).split('\n');
  rest = lines.pop() ?? '';
  for (const l of lines) if (l.startsWith('+') && !l.startsWith('+++')) added.push(l.slice(1));
});
await new Promise((r) => git.on('close', r));
const r = await lintSource({
  source: { filePath: '/range.patch', content: added.join('\n'), contentType: 'text' },
  options: { config: { rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: recommend }] } },
});
console.log(`secretlint: ${r.messages.length} finding(s) in ${added.length} added lines`);
