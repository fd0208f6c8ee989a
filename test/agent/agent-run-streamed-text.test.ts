import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { startFakeModel, type FakeModel } from '../helpers/fake-model.js';

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

describe('hermesd run: streamed text on stderr, the answer on stdout', () => {
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

  const script = () => [
    { content: 'Reading the readme first.', tool_calls: [{ name: 'read_file', arguments: { path: 'README.md' } }] },
    { content: 'The answer is forty-two.' },
  ];

  it('streaming: each text shows once on stderr as it arrives; the answer alone on stdout', async () => {
    const repo = t.repo({ 'README.md': '# demo\n' });
    model = await startFakeModel(script());
    const r = await t.cli(['run', 'what is the answer'], { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('The answer is forty-two.\n');
    expect(count(r.stderr, 'Reading the readme first.')).toBe(1);
    expect(count(r.stderr, 'The answer is forty-two.')).toBe(1);
    // The narration ends its line before the tool call is shown.
    expect(r.stderr).toMatch(/Reading the readme first\.\n→ read_file/);
  });

  it('non-streaming: narration once on stderr, the answer only on stdout', async () => {
    const repo = t.repo({ 'README.md': '# demo\n', '.hermes/config.yaml': 'model:\n  stream: false\n' });
    model = await startFakeModel(script());
    const r = await t.cli(['run', 'what is the answer'], { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('The answer is forty-two.\n');
    expect(count(r.stderr, 'Reading the readme first.')).toBe(1);
    expect(count(r.stderr, 'The answer is forty-two.')).toBe(0);
  });

  it('--json while streaming: stdout is the result object only, no streamed text anywhere', async () => {
    const repo = t.repo({ 'README.md': '# demo\n' });
    model = await startFakeModel(script());
    const r = await t.cli(['run', 'what is the answer', '--json'], { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
    expect(r.code, r.stderr).toBe(0);
    const out = r.json();
    expect(out).toMatchObject({ status: 'completed', answer: 'The answer is forty-two.', sessionId: expect.any(String) });
    expect(Object.keys(out).sort()).toEqual(['answer', 'sessionId', 'status', 'taskId', 'turns']);
    expect(r.stderr).not.toContain('Reading the readme first.');
  });
});
