/**
 * Cost that grows with the change, not with the repository: in a repository of 10,000 tracked
 * files, `git add -A && git commit` of one changed file makes the daemon (and every git it
 * starts) open no file of the work tree but the changed one and the rules' own files, list no
 * folder of the work tree, and start no git that walks the tree (`ls-files`, `status`,
 * `ls-tree -r`, a diff against the work tree). Observed from outside with strace attached to
 * the running daemon (its threads and children), not from hermesd's own bookkeeping.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeEnv } from '../helpers/env.js';

const FILES = 10_000;
const FOLDERS = 100;

describe('a commit in a 10,000-file repository', () => {
  const t = makeEnv();
  afterAll(() => t.cleanup());

  it('reads only what the commit changes', async () => {
    const strace = spawnSync('strace', ['-V'], { encoding: 'utf8' });
    expect(strace.status, 'strace is not installed (CI installs it: .ci/run)').toBe(0);
    const repo = t.repo({ 'README.md': '# big\n' });
    for (let d = 0; d < FOLDERS; d++) mkdirSync(join(repo, `pkg${d}`));
    for (let i = 0; i < FILES; i++) writeFileSync(join(repo, `pkg${i % FOLDERS}`, `file${i}.ts`), `export const v${i} = ${i};\n`);
    const git = (args: string[]) => spawnSync('git', args, { cwd: repo, env: t.env, encoding: 'utf8', timeout: 120_000 });
    expect(git(['add', '-A']).status).toBe(0);
    // 10,000 loose objects start git's automatic gc, detached, after this commit: it would run
    // beside the commits below (in CI the first of them once failed with git's 128). Pack in the
    // foreground instead, as a repository of this size is.
    expect(git(['-c', 'gc.auto=0', 'commit', '-qm', 'tree', '--no-verify']).status).toBe(0);
    const gc = git(['gc', '--quiet']);
    expect(gc.status, `git gc of the fixture failed: ${gc.stderr}`).toBe(0);
    const init = await t.cli(['init'], { cwd: repo });
    expect(init.code, `hermesd init failed: ${init.stderr}`).toBe(0);
    expect((await t.cli(['start'], { cwd: repo })).code).toBe(0);
    const status = await t.cli(['status', '--json'], { cwd: repo });
    const pid = status.json().pid as number;
    expect(pid, `status names no daemon pid: ${status.stdout}`).toBeGreaterThan(0);
    // The way people work, once untraced: the daemon's first commit loads what it loads once.
    const commit = () => spawnSync('sh', ['-c', 'git add -A && git commit -qm change'], { cwd: repo, env: t.env, encoding: 'utf8', timeout: 120_000 });
    writeFileSync(join(repo, 'pkg7/file7.ts'), 'export const v7 = "first";\n');
    const first = commit();
    expect(first.status, `the first commit through the hooks failed: ${first.stderr}`).toBe(0);
    await settle(repo, 1);

    // The daemon and the processes it already runs (a git started before the trace began is followed too).
    const children = readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean));
    const out = join(t.home, 'strace.txt');
    const tracer = spawn(
      'strace',
      ['-f', '-y', '-qq', '-s', '300', '-e', 'trace=openat,open,execve,getdents64', '-o', out, ...[pid, ...children].flatMap((p) => ['-p', String(p)])],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    // strace says nothing with -qq: wait until it has attached (the daemon's next syscall is traced).
    await new Promise((r) => setTimeout(r, 1500));
    writeFileSync(join(repo, 'pkg42/file42.ts'), 'export const v42 = "changed";\n');
    const r = commit();
    expect(r.status, `the traced commit failed: ${r.stderr}`).toBe(0);
    await settle(repo, 2);
    tracer.kill('SIGINT');
    await new Promise((resolve) => tracer.on('close', resolve));

    const lines = readFileSync(out, 'utf8').split('\n');
    const inTree = (p: string) => p.startsWith(repo + '/') && !p.startsWith(join(repo, '.git') + '/') && p !== join(repo, '.git');
    const opened = new Set<string>();
    const listed = new Set<string>();
    const gits: string[] = [];
    for (const l of lines) {
      const open = /openat\([^,]*, "([^"]+)"/.exec(l);
      if (open && !/ENOENT/.test(l)) {
        const p = open[1]!.startsWith('/') ? open[1]! : join(repo, open[1]!);
        if (inTree(p)) opened.add(p.slice(repo.length + 1));
      }
      const dents = /getdents64\(\d+<([^>]+)>/.exec(l);
      if (dents && inTree(dents[1]!)) listed.add(dents[1]!.slice(repo.length + 1));
      const exec = /execve\("[^"]*", \[([^\]]*)\]/.exec(l);
      if (exec && /"git"|\/git"/.test(exec[1]!.split(',')[0]!)) gits.push(exec[1]!.replace(/"/g, '').split(', ').slice(1).join(' '));
    }
    expect(lines.length, 'strace recorded nothing: it did not attach to the daemon').toBeGreaterThan(5);
    expect(gits.length, 'strace saw no git started for the commit: it did not follow the processes that start them').toBeGreaterThan(0);
    // The changed file, the rules' own files, and the attributes files on the changed file's path (git reads them to diff it).
    const allowed = (p: string) =>
      p === 'pkg42/file42.ts' || p.startsWith('.hermes/') || /^(HERMES|AGENTS|CLAUDE)\.md$/.test(p) || p === '.gitattributes' || p === 'pkg42/.gitattributes';
    expect(
      [...opened].filter((p) => !allowed(p)),
      'the daemon (or a git it started) opened work-tree files the commit did not change',
    ).toEqual([]);
    expect([...listed], 'the daemon listed work-tree folders').toEqual([]);
    const walks = [...new Set(gits)].filter((g) => {
      // the subcommand: the first word after git's own options (-c name=value pairs)
      const words = g.split(' ');
      let i = 0;
      while (words[i] === '-c') i += 2;
      const sub = words[i];
      const rest = words.slice(i + 1).join(' ');
      return (
        ['ls-files', 'status', 'add', 'update-index'].includes(sub!) ||
        (sub === 'ls-tree' && /(^| )-r\b/.test(rest)) ||
        (sub === 'diff' && !/--cached|\b[0-9a-f]{40}\b/.test(rest))
      );
    });
    expect(walks, `the daemon started git commands that walk the tree (all it started: ${[...new Set(gits)].join(' | ')})`).toEqual([]);
  }, 300_000);
});

/** Waits until the daemon has logged `n` post-commit hooks (their audit and evidence done). */
async function settle(repo: string, n: number): Promise<void> {
  const log = join(repo, '.git', 'hermesd', 'daemon.log');
  for (let i = 0; i < 300; i++) {
    const count = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => / hook post-commit\b/.test(l)).length;
    if (count >= n) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // The evidence is written after the answer: give it its turn.
  await new Promise((r) => setTimeout(r, 1000));
}
