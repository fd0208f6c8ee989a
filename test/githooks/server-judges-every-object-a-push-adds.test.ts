/**
 * A push adds objects, not only commits: a tag (lightweight or annotated) can name a blob or a
 * tree, and `git rev-list` of such a ref lists no commit at all. The pre-receive hook of
 * `hermesd init --server` judges every object a push adds: tags are peeled; a blob is judged as
 * content, a tree as each of its blobs the repository did not have, an annotated tag's message as
 * text. Real bare repository, real clone, real `git push`. (Keys are built at run time.)
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitIn, makeEnv, type TestEnv } from '../helpers/env.js';
import { serverSide } from '../helpers/server.js';

const KEY = 'AKIA' + 'Q3EGRV7YXH2MZK4P';
const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;

describe('the pre-receive hook judges every object a push adds', () => {
  let t: TestEnv;
  let server: string;
  let clone: string;

  const { push, serverTip } = serverSide(
    () => t,
    () => ({ server, clone }),
  );
  const serverHas = (ref: string) => serverTip(ref) !== '';
  /** A blob written into the clone's object store only (no commit holds it). */
  const blob = (text: string) => spawnSync('git', ['hash-object', '-w', '--stdin'], { cwd: clone, env: t.env, input: text, encoding: 'utf8' }).stdout.trim();
  /** A tree of `files`, written from a scratch index (no commit holds it). */
  const tree = (files: Record<string, string>) => {
    const env = { ...t.env, GIT_INDEX_FILE: join(clone, '.git', 'scratch-index') };
    spawnSync('git', ['read-tree', '--empty'], { cwd: clone, env });
    for (const [path, text] of Object.entries(files)) {
      spawnSync('git', ['update-index', '--add', '--cacheinfo', `100644,${blob(text)},${path}`], { cwd: clone, env });
    }
    return spawnSync('git', ['write-tree'], { cwd: clone, env, encoding: 'utf8' }).stdout.trim();
  };

  beforeAll(async () => {
    t = makeEnv();
    const seed = t.repo({ '.hermes/config.yaml': RULES, 'README.md': '# project\n', 'docs/guide.md': 'a guide\n' });
    server = join(seed, '..', 'server.git');
    gitIn(t, seed, 'clone', '-q', '--bare', seed, server);
    const init = await t.cli(['init', '--server'], { cwd: server });
    expect(init.code, `init --server failed: ${init.stderr}`).toBe(0);
    clone = join(seed, '..', 'clone');
    gitIn(t, seed, 'clone', '-q', server, clone);
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('refuses a lightweight tag naming a blob that holds a key', () => {
    gitIn(t, clone, 'tag', 'leak-blob', blob(`aws = ${KEY}\n`));
    const r = push('origin', 'refs/tags/leak-blob');
    expect(r.code, `a tag naming a blob with a key was accepted:\n${r.err}`).not.toBe(0);
    expect(r.err, 'the refusal does not name the ref, line and rule').toMatch(/refs\/tags\/leak-blob:1\s+no-aws-keys\s+Never commit credentials\./);
    expect(serverHas('refs/tags/leak-blob'), 'the server took the tag').toBe(false);
  });

  it('refuses an annotated tag naming a blob that holds a key', () => {
    gitIn(t, clone, 'tag', '-a', '-m', 'a release note', 'leak-blob-annotated', blob(`first line\naws = ${KEY}\n`));
    const r = push('origin', 'refs/tags/leak-blob-annotated');
    expect(r.code, `an annotated tag naming a blob with a key was accepted:\n${r.err}`).not.toBe(0);
    expect(r.err, 'the refusal does not name the line of the key').toMatch(/refs\/tags\/leak-blob-annotated:2\s+no-aws-keys/);
    expect(serverHas('refs/tags/leak-blob-annotated'), 'the server took the tag').toBe(false);
  });

  it('refuses a tag naming a tree whose new blob holds a key, naming the path inside the tree', () => {
    const withKey = tree({ 'README.md': '# project\n', 'config/creds.env': `AWS_ACCESS_KEY_ID=${KEY}\n` });
    gitIn(t, clone, 'tag', 'leak-tree', withKey);
    const light = push('origin', 'refs/tags/leak-tree');
    expect(light.code, `a lightweight tag naming a tree with a key was accepted:\n${light.err}`).not.toBe(0);
    expect(light.err, 'the refusal does not name the path in the tree').toMatch(/config\/creds\.env:1\s+no-aws-keys/);
    gitIn(t, clone, 'tag', '-a', '-m', 'snapshot', 'leak-tree-annotated', withKey);
    const annotated = push('origin', 'refs/tags/leak-tree-annotated');
    expect(annotated.code, `an annotated tag naming a tree with a key was accepted:\n${annotated.err}`).not.toBe(0);
    expect(serverHas('refs/tags/leak-tree') || serverHas('refs/tags/leak-tree-annotated'), 'the server took a tree tag').toBe(false);
  });

  it('refuses an annotated tag whose message holds a key', () => {
    gitIn(t, clone, 'tag', '-a', '-m', `release\n\ndeploy with ${KEY}`, 'leak-message', 'HEAD');
    const r = push('origin', 'refs/tags/leak-message');
    expect(r.code, `a tag message with a key was accepted:\n${r.err}`).not.toBe(0);
    expect(r.err, 'the refusal does not say it is the tag message').toMatch(/tag message.*no-aws-keys|no-aws-keys.*tag message/);
  });

  it('accepts clean tags of a blob, a tree and a commit, and says what it judged', () => {
    gitIn(t, clone, 'tag', 'clean-blob', blob('nothing to see\n'));
    gitIn(t, clone, 'tag', '-a', '-m', 'clean tree', 'clean-tree', tree({ 'README.md': '# project\n', 'notes.txt': 'notes\n' }));
    gitIn(t, clone, 'tag', '-a', '-m', 'v1', 'v1', 'HEAD');
    const r = push('origin', 'refs/tags/clean-blob', 'refs/tags/clean-tree', 'refs/tags/v1');
    expect(r.code, `clean tags were refused:\n${r.err}`).toBe(0);
    expect(r.err, 'the hook does not report the blob it judged').toMatch(/refs\/tags\/clean-blob: .*judged, no rule violations/);
    expect(serverHas('refs/tags/clean-tree') && serverHas('refs/tags/v1'), 'the server lacks a clean tag').toBe(true);
  });
});
