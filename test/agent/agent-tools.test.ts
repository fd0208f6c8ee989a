/**
 * Each agent tool, called as the model calls it (name + JSON arguments string) through the
 * registry, over a real git repository, a real HERMES_HOME and a real SessionDB.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentServices } from '../../src/agent/standalone.js';
import { runToolCall, TOOLS, toolSpecs, type ToolContext } from '../../src/agent/tools/index.js';
import { TERMINAL_OUTPUT_MAX_CHARS } from '../../src/agent/tools/terminal.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';

describe('agent tools', () => {
  let t: TestEnv;
  let repo: string;
  let ctx: ToolContext;
  const call = async (name: string, args: unknown) => {
    const r = await runToolCall(TOOLS, { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) }, ctx);
    return { ...r, value: JSON.parse(r.content) as Record<string, any> };
  };

  beforeEach(() => {
    t = makeEnv();
    repo = t.repo({
      'README.md': '# demo\n',
      'src/app.ts': 'export function add(a: number, b: number) {\n    return a + b;\n}\n',
      'src/generated/api.ts': '// generated\n',
      '.hermes/config.yaml':
        'rules:\n  - id: generated-files\n    message: Do not edit generated files directly; change the schema and run `npm run gen`.\n    protect: ["src/generated/**"]\n',
    });
    const services = createAgentServices({ root: repo, home: t.home });
    ctx = { root: repo, sessionId: 'test-session', signal: new AbortController().signal, config: services.config, services };
  });
  afterEach(async () => {
    ctx.services.sessions.close();
    await t.cleanup();
  });

  it('declares the fixed tool names, each with a JSON schema of its parameters', () => {
    const specs = toolSpecs();
    const byName = Object.fromEntries(specs.map((s) => [(s as any).function.name, (s as any).function.parameters]));
    expect(Object.keys(byName)).toEqual([
      'read_file',
      'write_file',
      'patch',
      'search_files',
      'terminal',
      'memory',
      'session_search',
      'skills_list',
      'skill_view',
      'skill_manage',
      'remember',
    ]);
    const props = (n: string) => Object.keys(byName[n].properties ?? {}).sort();
    expect(props('read_file')).toEqual(['limit', 'offset', 'path']);
    expect(props('write_file')).toEqual(['content', 'path']);
    expect(props('patch')).toEqual(['new_string', 'old_string', 'path', 'replace_all']);
    expect(props('search_files')).toEqual(['path', 'pattern']);
    expect(props('terminal')).toEqual(['command', 'timeout']);
    expect(props('memory')).toEqual(['action', 'content', 'old_text', 'scope', 'target']);
    expect(byName.memory.properties.scope.enum).toEqual(['global', 'repo']);
    expect(props('session_search')).toEqual(['around_message_id', 'limit', 'query', 'session_id', 'window']);
    expect(props('skills_list')).toEqual([]);
    expect(props('skill_view')).toEqual(['file_path', 'name']);
    expect(props('remember')).toEqual(['sentence']);
    expect(props('skill_manage')).toEqual(['action', 'category', 'content', 'file_content', 'file_path', 'name', 'new_string', 'old_string', 'replace_all']);
    expect(byName.memory.properties.action.enum).toEqual(['add', 'replace', 'remove']);
    expect(byName.read_file.required).toEqual(['path']);
    expect(byName.read_file.$schema).toBeUndefined();
  });

  it('bad arguments give an error the model can act on', async () => {
    const notJson = await call('read_file', '{path: README.md');
    expect(notJson.ok).toBe(false);
    expect(notJson.value.error).toMatch(/not valid JSON/);
    const missing = await call('read_file', { offset: 2 });
    expect(missing.value.error).toMatch(/Invalid arguments for read_file: path: /);
    expect(missing.value.error).toContain('Expected parameters');
    const extra = await call('write_file', { path: 'a', content: 'x', mode: 'append' });
    expect(extra.value.error).toMatch(/mode/);
    const unknown = await call('delete_everything', {});
    expect(unknown.value.error).toMatch(/Unknown tool "delete_everything". Available tools: read_file/);
  });

  it('read_file pages by line with total_lines', async () => {
    writeFileSync(join(repo, 'long.txt'), Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    const r = await call('read_file', { path: 'long.txt', offset: 10, limit: 5 });
    expect(r.ok).toBe(true);
    expect(r.value).toMatchObject({
      path: 'long.txt',
      content: 'line 10\nline 11\nline 12\nline 13\nline 14',
      start_line: 10,
      end_line: 14,
      total_lines: 50,
      truncated: true,
    });
    expect(r.value.hint).toContain('offset 15');
    expect((await call('read_file', { path: 'nope.txt' })).value.error).toMatch(/does not exist/);
    writeFileSync(join(repo, 'bin.dat'), Buffer.from([1, 2, 0, 3]));
    expect((await call('read_file', { path: 'bin.dat' })).value.error).toMatch(/binary/);
  });

  it('write_file creates parents; patch edits fuzzily and reports ambiguity', async () => {
    const w = await call('write_file', { path: 'docs/new/notes.md', content: 'hello\n' });
    expect(w.value).toMatchObject({ path: 'docs/new/notes.md', bytes_written: 6, created: true });
    expect(readFileSync(join(repo, 'docs/new/notes.md'), 'utf8')).toBe('hello\n');
    // Indentation differs from the file (2 spaces vs 4): the fuzzy matcher still finds it.
    const p = await call('patch', { path: 'src/app.ts', old_string: '  return a + b;', new_string: '    return a + b + 0;' });
    expect(p.ok, p.content).toBe(true);
    expect(p.value.replacements).toBe(1);
    expect(readFileSync(join(repo, 'src/app.ts'), 'utf8')).toContain('return a + b + 0;');
    writeFileSync(join(repo, 'dup.txt'), 'x = 1\ny = 2\nx = 1\n');
    const amb = await call('patch', { path: 'dup.txt', old_string: 'x = 1', new_string: 'x = 3' });
    expect(amb.ok).toBe(false);
    expect(amb.value.error).toMatch(/dup\.txt/);
    const all = await call('patch', { path: 'dup.txt', old_string: 'x = 1', new_string: 'x = 3', replace_all: true });
    expect(all.value.replacements).toBe(2);
    expect(readFileSync(join(repo, 'dup.txt'), 'utf8')).toBe('x = 3\ny = 2\nx = 3\n');
    const none = await call('patch', { path: 'dup.txt', old_string: 'zzz', new_string: 'q' });
    expect(none.ok).toBe(false);
  });

  it('write_file and patch refuse a protected path, quoting the rule id and message', async () => {
    for (const [name, args] of [
      ['write_file', { path: 'src/generated/api.ts', content: 'hacked' }],
      ['patch', { path: 'src/generated/api.ts', old_string: '// generated', new_string: 'hacked' }],
      ['write_file', { path: './src/generated/new.ts', content: 'x' }],
    ] as const) {
      const r = await call(name, args);
      expect(r.ok).toBe(false);
      expect(r.value.error).toContain('generated-files');
      expect(r.value.error).toContain('Do not edit generated files directly; change the schema and run `npm run gen`.');
      expect(r.value.rule).toBe('generated-files');
    }
    expect(readFileSync(join(repo, 'src/generated/api.ts'), 'utf8')).toBe('// generated\n');
    expect(existsSync(join(repo, 'src/generated/new.ts'))).toBe(false);
    // A symlink inside the repository that points at a protected file is refused too.
    symlinkSync('src/generated/api.ts', join(repo, 'alias.ts'));
    const viaLink = await call('write_file', { path: 'alias.ts', content: 'hacked' });
    expect(viaLink.value.error).toContain('generated-files');
    expect(readFileSync(join(repo, 'src/generated/api.ts'), 'utf8')).toBe('// generated\n');
    // Reading a protected file is fine.
    expect((await call('read_file', { path: 'src/generated/api.ts' })).ok).toBe(true);
  });

  it('file tools are confined to the repository: .., absolute paths, symlinks out, .git', async () => {
    const outside = join(t.home, 'outside.txt');
    writeFileSync(outside, 'secret\n');
    mkdirSync(join(t.home, 'outdir'));
    symlinkSync(outside, join(repo, 'link-out.txt'));
    symlinkSync(join(t.home, 'outdir'), join(repo, 'dir-out'));
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['read_file', { path: '../outside.txt' }, /outside the repository/],
      ['read_file', { path: 'src/../../outside.txt' }, /outside the repository/],
      ['read_file', { path: outside }, /outside the repository/],
      ['read_file', { path: 'link-out.txt' }, /symbolic link .*outside the repository/],
      ['write_file', { path: 'link-out.txt', content: 'x' }, /outside the repository/],
      ['write_file', { path: 'dir-out/new.txt', content: 'x' }, /outside the repository/],
      ['write_file', { path: '/tmp/hermesd-escape.txt', content: 'x' }, /outside the repository/],
      ['patch', { path: 'link-out.txt', old_string: 'secret', new_string: 'x' }, /outside the repository/],
      ['search_files', { pattern: 'secret', path: '..' }, /outside the repository/],
      ['write_file', { path: '.git/hooks/pre-commit', content: 'x' }, /git directory/],
    ];
    for (const [name, args, re] of cases) {
      const r = await call(name, args);
      expect(r.ok, `${name} ${JSON.stringify(args)}`).toBe(false);
      expect(r.value.error, `${name} ${JSON.stringify(args)}`).toMatch(re);
    }
    expect(readFileSync(outside, 'utf8')).toBe('secret\n');
    expect(existsSync(join(t.home, 'outdir', 'new.txt'))).toBe(false);
    expect(existsSync('/tmp/hermesd-escape.txt')).toBe(false);
    // An absolute path inside the repository is fine; search does not follow the link out.
    expect((await call('read_file', { path: join(repo, 'README.md') })).value.content).toBe('# demo');
    const s = await call('search_files', { pattern: 'secret' });
    expect(s.value.matches).toEqual([]);
  });

  it('search_files finds content with line numbers and paths, skipping ignored files', async () => {
    writeFileSync(join(repo, '.gitignore'), 'build/\n');
    mkdirSync(join(repo, 'build'));
    writeFileSync(join(repo, 'build/out.js'), 'function add() {}\n');
    const r = await call('search_files', { pattern: 'function \\w+\\(' });
    expect(r.value.matches).toEqual([{ path: 'src/app.ts', line: 1, text: 'export function add(a: number, b: number) {' }]);
    const byPath = await call('search_files', { pattern: 'generated', path: 'src' });
    expect(byPath.value.files).toEqual(['src/generated/api.ts']);
    const literal = await call('search_files', { pattern: 'add(a' });
    expect(literal.value.note).toMatch(/literally/);
    expect(literal.value.matches).toHaveLength(1);
  });

  it('terminal runs in the repository with exit code, timeout (process group killed) and output cap', async () => {
    const ok = await call('terminal', { command: 'pwd; echo err >&2; exit 3' });
    expect(ok.value.exit_code).toBe(3);
    expect(ok.value.output).toContain(repo);
    expect(ok.value.output).toContain('err');
    const started = Date.now();
    const slow = await call('terminal', { command: 'sleep 30 & sleep 30; echo never', timeout: 1 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(slow.value.timed_out).toBe(true);
    expect(slow.value.output).not.toContain('never');
    const big = await call('terminal', { command: `yes abcdefghij | head -c 200000; echo; echo TAIL-MARK` });
    expect(big.value.truncated).toBe(true);
    expect(big.value.output.length).toBeLessThan(TERMINAL_OUTPUT_MAX_CHARS + 200);
    expect(big.value.output).toContain('chars of output omitted');
    expect(big.value.output).toContain('TAIL-MARK');
  });

  it('terminal is killed when the task is cancelled', async () => {
    const abort = new AbortController();
    ctx = { ...ctx, signal: abort.signal };
    setTimeout(() => abort.abort(), 300);
    const started = Date.now();
    const r = await call('terminal', { command: 'sleep 20' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(r.value.cancelled).toBe(true);
  });

  it('memory writes reach disk and refusals come back as results', async () => {
    const add = await call('memory', { action: 'add', target: 'memory', content: 'Project uses vitest.' });
    expect(add.ok).toBe(true);
    expect(add.value.entryCount).toBe(1);
    expect(readFileSync(join(t.home, 'memories', 'MEMORY.md'), 'utf8')).toContain('Project uses vitest.');
    const rep = await call('memory', { action: 'replace', target: 'memory', old_text: 'vitest', content: 'Project uses vitest 4.' });
    expect(rep.ok).toBe(true);
    expect(readFileSync(join(t.home, 'memories', 'MEMORY.md'), 'utf8')).toBe('Project uses vitest 4.');
    const big = await call('memory', { action: 'add', target: 'user', content: 'x'.repeat(5000) });
    expect(big.ok).toBe(false);
    expect(big.value.error).toMatch(/limit|exceed/i);
    // A stale fact can be dropped even when it is the store's only entry: the call names it.
    const rm = await call('memory', { action: 'remove', target: 'memory', old_text: 'vitest' });
    expect(rm.value).toMatchObject({ success: true, entryCount: 0 });
    expect(readFileSync(join(t.home, 'memories', 'MEMORY.md'), 'utf8')).toBe('');
    const bad = await call('memory', { action: 'append', target: 'memory', content: 'x' });
    expect(bad.value.error).toMatch(/action/);
  });

  it('session_search finds earlier sessions of this repository', async () => {
    const db = ctx.services.sessions;
    const s = db.createSession({ repo, source: 'cli', systemPrompt: 'sys' });
    db.appendMessage(s.id, { role: 'user', content: 'the flaky parser test failed with ENOSPC' });
    db.appendMessage(s.id, { role: 'assistant', content: 'cleaned the tmp dir' });
    const r = await call('session_search', { query: 'ENOSPC parser' });
    expect(r.ok, r.content).toBe(true);
    expect(r.content).toContain(s.id);
    expect(r.content).toContain('ENOSPC');
    const read = await call('session_search', { session_id: s.id });
    expect(read.content).toContain('cleaned the tmp dir');
  });

  it('skills_list, skill_manage create, skill_view', async () => {
    const created = await call('skill_manage', {
      action: 'create',
      name: 'regen-api',
      category: 'dev',
      content: '---\nname: regen-api\ndescription: Regenerate the API client from the schema.\n---\n\nRun `npm run gen`, then check the diff.\n',
    });
    expect(created.ok, created.content).toBe(true);
    const list = await call('skills_list', {});
    expect(list.value.skills).toEqual([expect.objectContaining({ name: 'regen-api', scope: 'user' })]);
    const view = await call('skill_view', { name: 'regen-api' });
    expect(view.content).toContain('npm run gen');
    const missing = await call('skill_view', { name: 'nope' });
    expect(missing.ok).toBe(false);
  });
});
