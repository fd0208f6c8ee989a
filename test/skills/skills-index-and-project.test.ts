import { mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clearCatalogMemory, loadCatalog } from '../../src/skills/index-cache.js';
import { SkillStore } from '../../src/skills/store.js';
import { pictureOf, skillMd, tempHome } from '../helpers/skills.js';
import { settled } from '../helpers/settled.js';

const S = { sessionId: 's' };

function put(root: string, rel: string, text: string): void {
  mkdirSync(join(root, rel, '..'), { recursive: true });
  writeFileSync(join(root, rel), text);
}

describe('skill index', () => {
  let h: ReturnType<typeof tempHome>;
  let store: SkillStore;
  const paths = () => ({ userRoot: h.skills, snapshotDir: join(h.home, '.skills-index'), generationFile: join(h.home, '.skills-generation') });
  beforeEach(() => {
    h = tempHome();
    store = new SkillStore({ home: h.home });
    clearCatalogMemory();
  });
  afterEach(() => h.cleanup());

  it('renders categories sorted, one line per skill, long descriptions cut to 57 + "..."', () => {
    put(h.skills, 'zeta/z-one/SKILL.md', skillMd('z-one', 'Short description'));
    put(h.skills, 'alpha/a-two/SKILL.md', skillMd('a-two', 'x'.repeat(61)));
    put(h.skills, 'alpha/a-one/SKILL.md', skillMd('a-one', 'y'.repeat(60)));
    put(h.skills, 'top/SKILL.md', skillMd('top', 'Uncategorised'));
    const text = store.indexText();
    const body = text.slice(text.indexOf('<available_skills>'));
    expect(body).toBe(
      [
        '<available_skills>',
        '  alpha:',
        `    - a-one: ${'y'.repeat(60)}`,
        `    - a-two: ${'x'.repeat(57)}...`,
        '  general:',
        '    - top: Uncategorised',
        '  zeta:',
        '    - z-one: Short description',
        '</available_skills>',
      ].join('\n'),
    );
    expect(text).toMatch(/^## Skills\n.*skill_view\(name\)/);
  });

  it('orders names and categories by code unit, in the index and in the list alike (not by the locale: "_" after digits)', () => {
    for (const name of ['ab', 'a_b', 'a1', 'a-b', 'a.b']) put(h.skills, `z_ops/${name}/SKILL.md`, skillMd(name, name));
    put(h.skills, 'z1/zz/SKILL.md', skillMd('zz', 'zz'));
    const listed = store.list().map((s) => `${s.category}/${s.name}`);
    expect(listed).toEqual(['z1/zz', 'z_ops/a-b', 'z_ops/a.b', 'z_ops/a1', 'z_ops/a_b', 'z_ops/ab']);
    const text = store.indexText();
    const lines = text
      .slice(text.indexOf('<available_skills>'))
      .split('\n')
      .filter((l) => /^ {2}\S|^ {4}- /.test(l));
    expect(lines.map((l) => l.trim().replace(/:.*$/, ''))).toEqual(['z1', '- zz', 'z_ops', '- a-b', '- a.b', '- a1', '- a_b', '- ab']);
  });

  it('is served from memory, then from the disk snapshot, and rebuilt when the manifest changes', () => {
    put(h.skills, 'a/SKILL.md', skillMd('a', 'first'));
    expect(loadCatalog(paths()).source).toBe('built');
    expect(loadCatalog(paths()).source).toBe('memory');
    clearCatalogMemory(); // a new process
    expect(loadCatalog(paths()).source).toBe('snapshot');
    // A hand edit changes mtime and size: the snapshot is stale.
    clearCatalogMemory();
    writeFileSync(join(h.skills, 'a/SKILL.md'), skillMd('a', 'second, longer'));
    utimesSync(join(h.skills, 'a/SKILL.md'), new Date(), new Date(Date.now() + 5000));
    const rebuilt = loadCatalog(paths());
    expect(rebuilt.source).toBe('built');
    expect(rebuilt.text).toContain('a: second, longer');
    // A new skill folder changes the root folder's mtime.
    clearCatalogMemory();
    put(h.skills, 'b/SKILL.md', skillMd('b'));
    utimesSync(h.skills, new Date(), new Date(Date.now() + 10_000));
    expect(loadCatalog(paths()).skills.map((s) => s.name)).toEqual(['a', 'b']);
  });

  it('a new process rebuilds from the lean manifest after each kind of hand edit', () => {
    const later = (p: string, s: number) => utimesSync(p, new Date(), new Date(Date.now() + s * 1000));
    const fresh = () => {
      clearCatalogMemory(); // a new process: only the disk snapshot is left
      return loadCatalog(paths());
    };
    put(h.skills, 'ops/deploy/SKILL.md', skillMd('deploy', 'Ship it'));
    put(h.skills, 'ops/tool/SKILL.md', skillMd('tool', 'Use the tool'));
    put(h.skills, 'ops/tool/scripts/run.sh', 'echo ok\n');
    put(h.skills, 'docs/write/SKILL.md', skillMd('write', 'Write docs'));
    expect(loadCatalog(paths()).source).toBe('built');
    expect(fresh().source).toBe('snapshot');

    // The snapshot holds the text and a manifest relative to the roots, not bodies or absolute paths.
    const snap = readdirSync(join(h.home, '.skills-index'))
      .map((f) => readFileSync(join(h.home, '.skills-index', f), 'utf8'))
      .join('');
    expect(snap).not.toContain('Step 1: read the docs');
    expect(snap).not.toContain(join(h.skills, 'ops'));

    // In-place edit of a description, same size: only the file's mtime tells.
    writeFileSync(join(h.skills, 'ops/deploy/SKILL.md'), skillMd('deploy', 'Ship IT'));
    later(join(h.skills, 'ops/deploy/SKILL.md'), 5);
    let r = fresh();
    expect(r.source).toBe('built');
    expect(r.text).toContain('deploy: Ship IT');
    expect(fresh().source).toBe('snapshot');

    // A skill added to an existing category: the category folder's mtime.
    put(h.skills, 'ops/rollback/SKILL.md', skillMd('rollback', 'Undo a deploy'));
    later(join(h.skills, 'ops'), 10);
    expect(fresh().text).toContain('rollback: Undo a deploy');

    // A category removed: the root's mtime.
    rmSync(join(h.skills, 'docs'), { recursive: true });
    later(h.skills, 15);
    expect(fresh().text).not.toContain('write:');

    // A supporting file edited in place to something dangerous: the skill leaves the index.
    writeFileSync(join(h.skills, 'ops/tool/scripts/run.sh'), 'rm -rf /\n');
    later(join(h.skills, 'ops/tool/scripts/run.sh'), 20);
    r = fresh();
    expect(r.text).not.toContain('tool:');
    expect(r.warnings.join('\n')).toMatch(/ops\/tool scans dangerous/);

    // skill_manage's generation bump is honoured without any mtime change.
    writeFileSync(join(h.home, '.skills-generation'), 'other-daemon');
    expect(fresh().source).toBe('built');
    // The lazily parsed skill list of a snapshot matches the built one.
    expect(fresh().skills).toEqual(loadCatalog(paths(), { noMemory: true }).skills);
  });

  it('skill_manage invalidates the cache; a watcher event (invalidate) picks up hand edits', async () => {
    await settled(() => store.manage({ action: 'create', name: 'one', content: skillMd('one', 'first skill') }, S));
    expect(store.indexText()).toContain('one: first skill');
    await settled(() => store.manage({ action: 'create', name: 'two', content: skillMd('two', 'second skill') }, S));
    expect(store.indexText()).toContain('two: second skill');
    await settled(() => store.manage({ action: 'patch', name: 'one', old_string: 'first skill', new_string: 'patched skill' }, S));
    expect(store.indexText()).toContain('one: patched skill');
    // Another store in another process would see the generation file change.
    const other = new SkillStore({ home: h.home });
    await settled(() => other.manage({ action: 'delete', name: 'two' }, S));
    expect(store.indexText()).not.toContain('two:');
    // A hand edit is not seen until the watcher says so (in-memory entry is trusted)...
    put(h.skills, 'three/SKILL.md', skillMd('three', 'by hand'));
    expect(store.indexText()).not.toContain('three');
    store.invalidate();
    expect(store.indexText()).toContain('three: by hand');
  });
});

describe('project skills', () => {
  let h: ReturnType<typeof tempHome>;
  let repo: string;
  let store: SkillStore;
  beforeEach(async () => {
    h = tempHome();
    clearCatalogMemory();
    repo = join(h.home, 'repo');
    put(join(repo, '.hermes/skills'), 'release/ship/SKILL.md', skillMd('ship', 'Project way to ship'));
    put(join(repo, '.hermes/skills'), 'lint/SKILL.md', skillMd('lint', 'Project lint'));
    const userOnly = new SkillStore({ home: h.home });
    await settled(() => userOnly.manage({ action: 'create', name: 'ship', content: skillMd('ship', 'My way to ship') }, S));
    await settled(() => userOnly.manage({ action: 'create', name: 'mine', content: skillMd('mine', 'Mine') }, S));
    store = new SkillStore({ home: h.home, repoRoot: repo });
  });
  afterEach(() => h.cleanup());

  it('are listed as [project] and win name collisions', () => {
    expect(store.list()).toEqual([
      { name: 'lint', category: null, description: 'Project lint', scope: 'project' },
      { name: 'mine', category: null, description: 'Mine', scope: 'user' },
      { name: 'ship', category: 'release', description: 'Project way to ship', scope: 'project' },
    ]);
    expect(store.indexText()).toContain('    - ship [project]: Project way to ship');
    expect(settled(() => store.view('ship'))).toMatchObject({ success: true, scope: 'project', description: 'Project way to ship' });
  });

  it('are read-only to the agent: every action is refused and nothing changes', async () => {
    const before = { user: pictureOf(h.skills), project: pictureOf(join(repo, '.hermes/skills')) };
    const commits = await store.commitCount();
    const attempts = [
      { action: 'edit', name: 'ship', content: skillMd('ship', 'x') },
      { action: 'patch', name: 'lint', old_string: 'Step 1', new_string: 'Step one' },
      { action: 'delete', name: 'ship' },
      { action: 'write_file', name: 'lint', file_path: 'references/a.md', file_content: 'a' },
      { action: 'remove_file', name: 'lint', file_path: 'references/a.md' },
      { action: 'create', name: 'lint', content: skillMd('lint') },
    ];
    for (const a of attempts) {
      const r = await settled(() => store.manage(a, S));
      expect(r, a.action).toMatchObject({ success: false, kind: 'refused', error: expect.stringMatching(/project skill/) });
    }
    expect(await settled(() => store.revert('ship', 'HEAD'))).toMatchObject({ success: false, kind: 'refused', error: expect.stringMatching(/read-only/) });
    expect({ user: pictureOf(h.skills), project: pictureOf(join(repo, '.hermes/skills')) }).toEqual(before);
    expect(await store.commitCount()).toBe(commits);
  });
});
