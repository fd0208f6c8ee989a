import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inotifyWatchCount } from '../../src/watcher/inotify.js';
import { RepoWatcher, type ChangeKind, type WatcherOptions } from '../../src/watcher/watcher.js';
import { git, writeFiles } from '../helpers/env.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-watch-')));
const home = join(base, 'home');
let root: string;
let watcher: RepoWatcher | undefined;
let seen: ChangeKind[][] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitForKind(kind: ChangeKind, ms = 300): Promise<number> {
  const t0 = Date.now();
  while (!seen.some((k) => k.includes(kind))) {
    if (Date.now() - t0 > ms) throw new Error(`no '${kind}' event within ${ms} ms; saw ${JSON.stringify(seen)}`);
    await sleep(5);
  }
  return Date.now() - t0;
}

async function start(hooks?: WatcherOptions['hooks']): Promise<RepoWatcher> {
  seen = [];
  watcher = new RepoWatcher({ root, gitDir: join(root, '.git'), home, onChange: (k) => seen.push([...k]), ...(hooks ? { hooks } : {}) });
  await watcher.start();
  return watcher;
}

beforeAll(() => {
  mkdirSync(join(home, 'skills'), { recursive: true });
  root = join(base, 'repo');
  const files: Record<string, string> = {
    '.gitignore': 'node_modules/\nbuild/\n',
    'AGENTS.md': 'rules',
    '.hermes/config.yaml': 'rules: []\n',
    'src/a.ts': 'a',
  };
  for (let d = 0; d < 20; d++) files[`src/d${d}/f.ts`] = 'x';
  for (let d = 0; d < 30; d++) files[`node_modules/p${d}/index.js`] = 'x';
  writeFiles(root, files);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'add', '-A');
  git(root, '-c', 'user.name=T', '-c', 'user.email=t@e', '-c', 'commit.gpgsign=false', 'commit', '-qm', 'init');
});
afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('repository watcher', () => {
  it('reports authority, config, skills and workspace changes within 300 ms', async () => {
    await start();
    writeFileSync(join(root, 'AGENTS.md'), 'rules v2');
    await waitForKind('authority');
    seen = [];
    writeFileSync(join(root, '.hermes/config.yaml'), 'rules: []\nchecks: []\n');
    await waitForKind('config');
    seen = [];
    writeFiles(root, { '.hermes/skills/deploy/SKILL.md': '# deploy' });
    await waitForKind('skills');
    seen = [];
    writeFiles(home, { 'skills/lint/SKILL.md': '# lint' });
    await waitForKind('skills');
    seen = [];
    writeFiles(home, { 'SOUL.md': 'me' });
    await waitForKind('authority');
    seen = [];
    writeFileSync(join(root, 'src/d7/f.ts'), 'edited deep in the tree');
    await waitForKind('workspace');
  });

  it('reports memory store writes (by rename, as the store writes), also when memories/ appears after start', async () => {
    rmSync(join(home, 'memories'), { recursive: true, force: true });
    await start();
    mkdirSync(join(home, 'memories'));
    // The new folder is itself a memory change; once reported (and its watch settled), the temp file must not be one.
    await waitForKind('memory', 5_000);
    await sleep(200);
    seen = [];
    writeFileSync(join(home, 'memories', '.MEMORY.md.tmp'), 'Project uses pnpm');
    await sleep(150);
    expect(seen.flat()).not.toContain('memory');
    renameSync(join(home, 'memories', '.MEMORY.md.tmp'), join(home, 'memories', 'MEMORY.md'));
    await waitForKind('memory');
    seen = [];
    writeFileSync(join(home, 'memories', 'USER.md'), 'Prefers short answers');
    await waitForKind('memory');
    // The store's first write creates the folder and the file at once, before the folder has a watch.
    rmSync(join(home, 'memories'), { recursive: true, force: true });
    await sleep(100);
    seen = [];
    mkdirSync(join(home, 'memories'));
    writeFileSync(join(home, 'memories', 'MEMORY.md'), 'First fact');
    await waitForKind('memory');
  });

  it('watches at most one inotify watch per directory, none under ignored trees', async () => {
    const before = inotifyWatchCount() ?? 0;
    const w = await start();
    const used = (inotifyWatchCount() ?? 0) - before;
    const st = w.state();
    expect(st.tree).toMatchObject({ mode: 'watched' });
    // root, src, 20 subdirs, .hermes (+ skills) — never node_modules/p*.
    const dirs = (st.tree as { dirs: number }).dirs;
    expect(dirs).toBeLessThan(30);
    // Beyond the tree's directories only the git dir, git dir/logs and $HERMES_HOME's few directories; no file has a watch.
    expect(used).toBeLessThanOrEqual(dirs + 8);
    seen = [];
    writeFileSync(join(root, 'node_modules/p3/index.js'), 'changed');
    mkdirSync(join(root, 'build'), { recursive: true });
    // The root's watch reports the new folder; the batch that follows it asks git and must leave it unwatched.
    await waitForKind('workspace', 5_000);
    const t0 = Date.now();
    while ((w.state().tree as { following?: true }).following) {
      if (Date.now() - t0 > 10_000) throw new Error('the batch following the new ignored folder did not finish within 10 s');
      await sleep(10);
    }
    expect((w.state().tree as { dirs: number }).dirs, 'the ignored new folder got a watch').toBe(dirs);
    seen = [];
    writeFileSync(join(root, 'build/out.js'), 'generated');
    await sleep(250);
    expect(seen).toEqual([]);
  });

  it('acts on nothing while .git/index.lock exists, then reports what changed once', async () => {
    const w = await start();
    const lock = join(root, '.git', 'index.lock');
    writeFileSync(lock, '');
    await sleep(100);
    seen = [];
    writeFileSync(join(root, 'AGENTS.md'), 'rules during commit');
    await sleep(400);
    expect(seen).toEqual([]);
    expect(w.state()).toMatchObject({ state: 'paused', pausedBy: 'index.lock' });
    expect(w.state().pending).toContain('authority');
    unlinkSync(lock);
    const ms = await waitForKind('authority', 600);
    expect(ms).toBeLessThan(600);
    expect(seen.flat()).toContain('workspace');
    expect(w.state().state).toBe('ready');
  });

  it('holds back during a rebase (rebase-merge directory) too', async () => {
    const w = await start();
    mkdirSync(join(root, '.git', 'rebase-merge'));
    try {
      await sleep(100);
      seen = [];
      writeFileSync(join(root, 'AGENTS.md'), 'rules during rebase');
      await sleep(300);
      expect(seen).toEqual([]);
      expect(w.state().pausedBy).toBe('rebase');
    } finally {
      rmSync(join(root, '.git', 'rebase-merge'), { recursive: true });
    }
    await waitForKind('authority', 600);
  });

  it("acts on nothing while one of the daemon's hooks runs, then reports once released", async () => {
    // The daemon's hooks as the hook service shows them to the watcher: which one runs, and 'hook-end' once it answered.
    let running: string | undefined;
    const events = new EventEmitter();
    const w = await start({ running: () => running, events });
    running = 'pre-commit';
    seen = [];
    writeFileSync(join(root, 'AGENTS.md'), 'rules during a hook');
    await sleep(300);
    expect(seen).toEqual([]);
    expect(w.state()).toMatchObject({ state: 'paused', pausedBy: 'hook pre-commit' });
    running = undefined;
    events.emit('hook-end', { hook: 'pre-commit' });
    await waitForKind('authority', 300);
    expect(w.state().state).toBe('ready');
  });

  it('sees the branch move through logs/HEAD alone, also when the logs folder comes after start', async () => {
    const head = git(root, 'rev-parse', 'HEAD').trim();
    // A branch moved by update-ref changes neither HEAD (a symbolic ref) nor the index: only the reflog says so.
    const moveBranch = () => git(root, '-c', 'core.logAllRefUpdates=true', 'update-ref', '-m', 'moved', 'HEAD', head);
    await start();
    await sleep(50);
    seen = [];
    moveBranch();
    await waitForKind('workspace');
    await watcher?.close();
    rmSync(join(root, '.git', 'logs'), { recursive: true, force: true });
    await start();
    // The first move makes the folder (its watch starts then); the next is seen through it.
    moveBranch();
    await sleep(150);
    seen = [];
    moveBranch();
    await waitForKind('workspace');
    // Nothing in the git dir is watched but its own two folders: a ref file's change is the reflog's to report.
    expect(watcher?.state().targets).toBeGreaterThanOrEqual(2);
  });

  it('follows a new subdirectory chain given by a session cwd', async () => {
    const w = await start();
    writeFiles(root, { 'pkg/lib/x.ts': 'x' });
    await sleep(100);
    w.watchAuthorityDirs([join(root, 'pkg'), join(root, 'pkg/lib')]);
    await sleep(100);
    seen = [];
    writeFileSync(join(root, 'pkg/lib/AGENTS.md'), 'lib rules');
    await waitForKind('authority');
  });
});
