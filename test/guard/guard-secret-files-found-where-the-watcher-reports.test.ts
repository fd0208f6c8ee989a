/**
 * The secret files a daemon knows, found at the cost of what changed. SessionDB's writes
 * (every commit's evidence among them) redact the values of the repository's secret files; the
 * walk that finds those files looked at every directory of the tree each time. With the daemon's
 * watcher (a real RepoWatcher here) it looks only at the directories the watches report a
 * change in and at those no watch covers (ignored ones), and still finds every new secret file:
 * in a watched directory, in a new directory, in an ignored one. The walks the sandbox relies on
 * (`refresh()` without `trustWatch`) look at every directory, as before.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretValues } from '../../src/security/secret-values.js';
import { RepoWatcher } from '../../src/watcher/watcher.js';
import { waitFor } from '../helpers/env.js';

const DIRS = 120;
let base: string;
let root: string;
let watcher: RepoWatcher;
let secrets: SecretValues;

/** The redactions' walk (what `redact` runs at most once a second), as often as the test needs it. */
const lazyWalk = () => secrets.refresh(undefined, { trustWatch: true });

/** Until a redactions' walk knows `value` (the watcher's report may take a moment): how many directories that walk looked at. */
async function foundLazily(value: string, what: string): Promise<number> {
  let looked = -1;
  await waitFor(() => {
    const known = lazyWalk();
    looked = secrets.walkStats().looked;
    return known.includes(value);
  }, 5_000).catch(() => {
    throw new Error(`the redactions' walk never found ${what} (value ${value}) within 5 s of its creation`);
  });
  return looked;
}

beforeAll(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-walk-')));
  root = join(base, 'repo');
  mkdirSync(root);
  const git = (...a: string[]) =>
    execFileSync('git', a, {
      cwd: root,
      env: {
        ...process.env,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_AUTHOR_NAME: 'T',
        GIT_AUTHOR_EMAIL: 't@e',
        GIT_COMMITTER_NAME: 'T',
        GIT_COMMITTER_EMAIL: 't@e',
      },
    });
  git('init', '-q');
  writeFileSync(join(root, '.gitignore'), '.env*\nbuild/\n');
  for (let i = 0; i < DIRS; i++) {
    mkdirSync(join(root, `d${i % 12}`, `e${i}`), { recursive: true });
    writeFileSync(join(root, `d${i % 12}`, `e${i}`, 'f.txt'), `${i}\n`);
  }
  mkdirSync(join(root, 'build'));
  writeFileSync(join(root, '.env'), 'FIRST=firstvalue8Hq2Zk\n');
  git('add', '-A');
  git('commit', '-qm', 'tree');
  watcher = new RepoWatcher({ root, gitDir: join(root, '.git'), home: join(base, 'home'), onChange: () => undefined });
  await watcher.start();
  secrets = new SecretValues({ root, config: {}, env: {} });
  secrets.watchedBy(watcher.treeChanges());
}, 30_000);

afterAll(async () => {
  await watcher?.close();
  rmSync(base, { recursive: true, force: true });
});

describe("the secret files' walk looks where the watcher reports a change", () => {
  it('the first walk looks at every directory; the next, with nothing changed, at almost none', () => {
    expect(secrets.refresh()).toContain('firstvalue8Hq2Zk');
    const all = secrets.walkStats().looked;
    expect(all, 'the exact walk did not look at every directory of the tree').toBeGreaterThan(DIRS);
    lazyWalk();
    expect(
      secrets.walkStats().looked,
      `a walk with no change reported looked at directories the watches cover (the tree watch: ${JSON.stringify(watcher.state().tree)})`,
    ).toBeLessThan(5);
  });

  it('a secret file created in a watched directory is found, looking at that directory and the ignored ones', async () => {
    writeFileSync(join(root, 'd3', 'e15', '.env.local'), 'LOCAL=localvalue3Jw9Pd\n');
    expect(await foundLazily('localvalue3Jw9Pd', 'd3/e15/.env.local')).toBeLessThan(10);
  });

  it('a secret file in a new directory, written after the walk read that directory, is found', async () => {
    mkdirSync(join(root, 'd5', 'fresh'));
    writeFileSync(join(root, 'd5', 'fresh', 'notes.txt'), 'x\n');
    // The walk reads the new directory (its parent reported it), maybe before its own watch is in place…
    await waitFor(() => (lazyWalk(), secrets.walkStats().looked > 0), 5_000);
    // …and the secret file arrives after that read: found anyway.
    writeFileSync(join(root, 'd5', 'fresh', '.env'), 'FRESH=freshvalue6Tb4Nm\n');
    await foundLazily('freshvalue6Tb4Nm', 'd5/fresh/.env');
  });

  it('a directory holding a secret file, renamed then removed: the list follows it', async () => {
    mkdirSync(join(root, 'd8', 'keys'));
    writeFileSync(join(root, 'd8', 'keys', '.env'), 'KEYS=keysvalue7Wd3Gh\n');
    await foundLazily('keysvalue7Wd3Gh', 'd8/keys/.env');
    const listed = (file: string) => secrets.secretFiles().includes(join(root, file));
    renameSync(join(root, 'd8', 'keys'), join(root, 'd9', 'moved'));
    await waitFor(() => (lazyWalk(), listed('d9/moved/.env') && !listed('d8/keys/.env')), 5_000).catch(() => {
      throw new Error(`after a rename of d8/keys to d9/moved the secret files listed are ${JSON.stringify(secrets.secretFiles())}`);
    });
    rmSync(join(root, 'd9', 'moved'), { recursive: true });
    await waitFor(() => (lazyWalk(), !listed('d9/moved/.env')), 5_000).catch(() => {
      throw new Error(`after d9/moved was removed the secret files listed are ${JSON.stringify(secrets.secretFiles())}`);
    });
    expect(secrets.known(), 'the value of a removed secret file is still known').not.toContain('keysvalue7Wd3Gh');
  });

  it('a secret file in an ignored directory (no watch) is found', async () => {
    writeFileSync(join(root, 'build', '.env'), 'BUILD=buildvalue2Xr5Lq\n');
    await foundLazily('buildvalue2Xr5Lq', 'build/.env');
  });

  it("the sandbox's walk, and a walk without a watcher, look at every directory", () => {
    secrets.refresh();
    expect(secrets.walkStats().looked, 'refresh() without trustWatch skipped directories').toBeGreaterThan(DIRS);
    secrets.watchedBy(undefined);
    lazyWalk();
    expect(secrets.walkStats().looked, 'a walk without a watcher skipped directories').toBeGreaterThan(DIRS);
    secrets.watchedBy(watcher.treeChanges());
  });

  it('a new guard.secretPaths entry is applied to directories that did not change', () => {
    writeFileSync(join(root, 'd7', 'e19', 'service.cfg'), 'TOKEN=configvalue4Mv8Rs\n');
    secrets.refresh();
    expect(secrets.known()).not.toContain('configvalue4Mv8Rs');
    secrets.update({ config: { guard: { secretPaths: ['**/service.cfg'] } } });
    expect(secrets.refresh(), 'a secretPaths entry added to the config was not applied to a directory read before').toContain('configvalue4Mv8Rs');
  });
});

describe('the walk of every directory made without holding the process', () => {
  it('finds what the synchronous walk finds, deep and shallow, and lets the loop turn while it walks', async () => {
    const tree = join(base, 'wide');
    mkdirSync(tree);
    // More directories than one turn of the walk looks at.
    for (let i = 0; i < 1_200; i++) mkdirSync(join(tree, `a${i % 30}`, `b${i}`), { recursive: true });
    mkdirSync(join(tree, 'a7', 'b7', 'deep', 'deeper'), { recursive: true });
    writeFileSync(join(tree, '.env'), 'TOP=topvalue5Gt8Wq\n');
    writeFileSync(join(tree, 'a7', 'b7', 'deep', 'deeper', '.env.local'), 'DEEP=deepvalue3Jk6Pz\n');
    writeFileSync(join(tree, 'a29', 'b1199', 'credentials.json'), '{"token": "lastvalue9Qw2Er"}\n');
    const walked = new SecretValues({ root: tree, config: {}, env: {} });
    let turns = 0;
    let ticking = true;
    const tick = () => {
      if (!ticking) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    await walked.ready();
    ticking = false;
    const synchronous = new SecretValues({ root: tree, config: {}, env: {} });
    synchronous.refresh();
    expect(walked.secretFiles().sort(), 'the walk made in turns found other secret files than the synchronous one').toEqual(synchronous.secretFiles().sort());
    expect(walked.known(), 'a secret value the synchronous walk knows is missing').toEqual(expect.arrayContaining(synchronous.known()));
    expect(walked.secretFiles(), 'the deepest secret file was not found').toContain(join(tree, 'a7', 'b7', 'deep', 'deeper', '.env.local'));
    expect(walked.known(), 'the values of the top and the deepest secret files are not known').toEqual(
      expect.arrayContaining(['topvalue5Gt8Wq', 'deepvalue3Jk6Pz']),
    );
    expect(turns, `the walk of ${1_200 + 33} directories held the loop: it turned ${turns} times while it walked`).toBeGreaterThanOrEqual(3);
  });
});
