import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionDB } from '../../src/sessions/db.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { startFakeModel, type FakeModel } from '../helpers/fake-model.js';

describe('hermesd run: a full task through the daemon and the CLI', () => {
  let t: TestEnv;
  let model: FakeModel | undefined;
  beforeEach(() => {
    t = makeEnv();
  });
  afterEach(async () => {
    await t.cleanup();
    await model?.close();
    model = undefined;
  });

  it('reads, writes, answers; --json prints {sessionId, status, answer}; sessions show tells the story', async () => {
    const repo = t.repo({ 'README.md': '# demo\nversion: 1\n' });
    model = await startFakeModel([
      { tool_calls: [{ name: 'read_file', arguments: { path: 'README.md' } }] },
      (req) => {
        const last = req.messages[req.messages.length - 1]!;
        expect(last.role).toBe('tool');
        expect(String(last.content)).toContain('version: 1');
        return { content: 'Bumping.', tool_calls: [{ name: 'write_file', arguments: { path: 'VERSION', content: '2\n' } }] };
      },
      { content: 'Done: VERSION is 2.' },
    ]);
    const env = { OPENAI_BASE_URL: model.url, HERMESD_MODEL: 'fake-model' };
    const r = await t.cli(['run', 'bump the version', '--json'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(0);
    const out = r.json();
    expect(out).toMatchObject({ status: 'completed', answer: 'Done: VERSION is 2.', sessionId: expect.any(String) });
    expect(readFileSync(join(repo, 'VERSION'), 'utf8')).toBe('2\n');
    expect(model.requests).toHaveLength(3);
    expect(model.requests[0]!.model).toBe('fake-model');
    expect(model.authHeaders[0]).toBe('Bearer test-key');
    const names = model.requests[0]!.tools!.map((x) => x.function.name);
    expect(names).toEqual([
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
    expect(model.requests[0]!.tools![0]!.function.parameters).toMatchObject({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] });

    const db = new SessionDB(join(t.home, 'state.db'));
    try {
      expect(db.getSession(out.sessionId)).toMatchObject({ id: out.sessionId, repo, source: 'cli', endReason: 'completed', model: 'fake-model' });
      const messages = db.getMessages(out.sessionId);
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
      expect(messages[0]!.content).toBe('bump the version');
      expect(messages[1]!.toolCalls![0]!.function.name).toBe('read_file');
      expect(messages[2]!.toolCallId).toBe(messages[1]!.toolCalls![0]!.id);
      expect(messages[4]!.toolName).toBe('write_file');
      // The session row refers to the exact system prompt that was sent, by hash.
      const sha = db.getSession(out.sessionId)!.systemPromptSha256!;
      expect(db.getPrompt(sha)).toBe(model.requests[0]!.messages[0]!.content);
    } finally {
      db.close();
    }
    const show = await t.cli(['sessions', 'show', out.sessionId, '--json'], { cwd: repo });
    expect(show.code, show.stderr).toBe(0);
    expect(show.json().messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
  });

  it('human mode: progress on stderr, the answer on stdout; a failed task exits 1', async () => {
    const repo = t.repo();
    model = await startFakeModel([{ tool_calls: [{ name: 'terminal', arguments: { command: 'echo hello-from-shell' } }] }, { content: 'It said hello.' }]);
    const r = await t.cli(['run', 'say hello'], { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('It said hello.\n');
    expect(r.stderr).toContain('→ terminal');
    expect(r.stderr).toMatch(/✓ .*exit_code=0/);
    expect(JSON.parse(model.requests[1]!.messages.at(-1)!.content as string).output).toContain('hello-from-shell');

    model.push({ status: 401 });
    const bad = await t.cli(['run', 'again'], { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('task failed');
    expect(bad.stderr).toContain('OPENAI_API_KEY');
  });

  it('a task that completes after a refused write exits 0 and says which rule refused what; progress lines are one line each', async () => {
    const repo = t.repo({
      '.hermes/config.yaml': 'rules:\n  - id: generated\n    message: run the generator\n    protect: ["gen/**"]\n',
      'gen/a.ts': 'x\n',
    });
    model = await startFakeModel([
      { tool_calls: [{ name: 'write_file', arguments: { path: 'gen/a.ts', content: 'y\n' } }] },
      { tool_calls: [{ name: 'terminal', arguments: { command: 'printf "one\\ntwo\\n"' } }] },
      { content: 'I ran the generator instead.' },
    ]);
    const r = await t.cli(['run', 'change gen/a.ts'], { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
    expect(r.code, `a completed task with a refused write must exit 0 (the model was told and went on): ${r.stderr}`).toBe(0);
    expect(r.stdout).toBe('I ran the generator instead.\n');
    expect(r.stderr, 'the refusal is not said in plain output').toContain(
      'hermesd: 1 tool call was refused by repository rules: write_file gen/a.ts (rule generated)',
    );
    expect(readFileSync(join(repo, 'gen/a.ts'), 'utf8')).toBe('x\n');
    const result = r.stderr.split('\n').find((l) => l.includes('✓') && l.includes('exit_code=0'));
    expect(result, `the terminal's progress line is broken over lines by its output:\n${r.stderr}`).toMatch(/one ⏎ two/);

    model.push({ tool_calls: [{ name: 'write_file', arguments: { path: 'gen/a.ts', content: 'y\n' } }] }, { content: 'Could not.' });
    const json = await t.cli(['run', 'again', '--json'], { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
    expect(json.code, json.stderr).toBe(0);
    expect(json.json()).toMatchObject({ status: 'completed', refused: [{ tool: 'write_file', rule: 'generated', path: 'gen/a.ts' }] });
  });
});

describe('hermesd run: failures end the task with a status, never a hang', () => {
  let t: TestEnv;
  beforeEach(() => {
    t = makeEnv();
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('an unreachable model endpoint: exit 1 within seconds, the error names the URL', async () => {
    const repo = t.repo();
    const started = Date.now();
    const r = await t.cli(['run', 'anything', '--json'], { cwd: repo, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } });
    expect(Date.now() - started).toBeLessThan(12_000);
    expect(r.code).toBe(1);
    expect(r.json()).toMatchObject({ status: 'failed', error: { code: 'model-unreachable' } });
    expect(r.json().error.message).toContain('http://127.0.0.1:9/v1');
  });

  it('model.maxTurns bounds a model that never stops calling tools', async () => {
    const repo = t.repo({ '.hermes/config.yaml': 'model:\n  maxTurns: 2\n' });
    const model = await startFakeModel();
    try {
      const again = () => ({ content: 'once more', tool_calls: [{ name: 'terminal', arguments: { command: 'true' } }] });
      model.push(again, again, again);
      const r = await t.cli(['run', 'loop forever', '--json'], { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
      expect(r.code).toBe(1);
      expect(r.json()).toMatchObject({ status: 'max_turns', answer: 'once more' });
      expect(model.requests).toHaveLength(2);
    } finally {
      await model.close();
    }
  });
});
