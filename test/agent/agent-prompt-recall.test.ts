/**
 * Seed §2.1 and §2.3 through the real daemon: the system prompt is built once per session
 * and resent byte-identical after a memory write; recalled evidence goes only into the API
 * copy of the user message (fenced), stored as its api_content sidecar, and a continuation
 * replays exactly those bytes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RECALL_CLOSE, RECALL_OPEN } from '../../src/sessions/recall.js';
import { SessionDB } from '../../src/sessions/db.js';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { startFakeModel, type FakeModel } from '../helpers/fake-model.js';

describe('session prompt and turn-only recall', () => {
  let t: TestEnv;
  let model: FakeModel;
  beforeEach(async () => {
    t = makeEnv();
    model = await startFakeModel();
  });
  afterEach(async () => {
    await t.cleanup();
    await model.close();
  });

  it('the second model call of a session sends the same system bytes after a memory write; the next session sees it', async () => {
    const repo = t.repo();
    const env = { OPENAI_BASE_URL: model.url };
    model.push(
      { tool_calls: [{ name: 'memory', arguments: { action: 'add', target: 'user', content: 'User prefers tabs over spaces.' } }] },
      { content: 'Noted.' },
    );
    const r = await t.cli(['run', 'remember that I like tabs', '--json'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(t.home, 'memories', 'USER.md'), 'utf8')).toContain('User prefers tabs over spaces.');
    expect(model.requests).toHaveLength(2);
    const sys0 = model.requests[0]!.messages[0]!;
    const sys1 = model.requests[1]!.messages[0]!;
    expect(sys0.role).toBe('system');
    expect(Buffer.from(sys1.content as string).equals(Buffer.from(sys0.content as string))).toBe(true);
    expect(sys0.content).not.toContain('User prefers tabs over spaces.');
    // The tool result of the write is in the conversation, so the model knows what it did.
    expect(model.requests[1]!.messages.at(-1)!.content).toContain('"success":true');

    model.push({ content: 'fresh session' });
    const r2 = await t.cli(['run', 'hello again', '--json'], { cwd: repo, env });
    expect(r2.code, r2.stderr).toBe(0);
    expect(model.requests[2]!.messages[0]!.content).toContain('User prefers tabs over spaces.');
  });

  it('recall: fenced block in the API copy only, sidecar stored, replay sends the same bytes', async () => {
    const repo = t.repo();
    const other = t.repo();
    const env = { OPENAI_BASE_URL: model.url };
    // Evidence from an earlier session in this repository, and a decoy from another repository.
    const db = new SessionDB(join(t.home, 'state.db'));
    const old = db.createSession({ repo, source: 'cli', systemPrompt: 'old prompt' });
    db.appendMessage(old.id, { role: 'user', content: 'the flaky tokenizer test fails with ENOSPC on CI' });
    db.appendMessage(old.id, { role: 'assistant', content: 'The tokenizer test fills /tmp; cleaning the cache fixed ENOSPC.' });
    const decoy = db.createSession({ repo: other, source: 'cli' });
    db.appendMessage(decoy.id, { role: 'user', content: 'tokenizer ENOSPC in the other repository' });
    db.close();

    const words = 'Why does the tokenizer test fail?';
    model.push({ content: 'Because /tmp fills up.' });
    const r = await t.cli(['run', words, '--json'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(0);
    const { sessionId } = r.json();

    const sent = model.requests[0]!;
    const system = sent.messages[0]!.content as string;
    const userApi = sent.messages[1]!.content as string;
    expect(sent.messages[1]!.role).toBe('user');
    expect(userApi.startsWith(words + '\n\n' + RECALL_OPEN)).toBe(true);
    expect(userApi.trimEnd().endsWith(RECALL_CLOSE)).toBe(true);
    expect(userApi).toContain('NOT new user input');
    expect(userApi).toContain(old.id);
    expect(userApi).toContain('ENOSPC');
    expect(userApi).not.toContain(decoy.id);
    expect(system).not.toContain('ENOSPC');
    expect(system).not.toContain(RECALL_OPEN);

    const check = new SessionDB(join(t.home, 'state.db'));
    try {
      const stored = check.getMessages(sessionId);
      expect(stored[0]!.role).toBe('user');
      expect(stored[0]!.content).toBe(words);
      expect(stored[0]!.apiContent).toBe(userApi);
    } finally {
      check.close();
    }

    // Continue the session: the replay sends the sidecar bytes and the session's stored prompt.
    model.push({ content: 'Still /tmp.' });
    const c = await t.cli(['run', 'and now?', '--continue', sessionId, '--json'], { cwd: repo, env });
    expect(c.code, c.stderr).toBe(0);
    const replay = model.requests[1]!;
    expect(replay.messages[0]!.content).toBe(system);
    expect(replay.messages[1]).toEqual({ role: 'user', content: userApi });
    expect(replay.messages[2]).toMatchObject({ role: 'assistant', content: 'Because /tmp fills up.' });
    expect(replay.messages[3]).toEqual({ role: 'user', content: 'and now?' });
    const after = new SessionDB(join(t.home, 'state.db'));
    try {
      expect(after.getSession(c.json().sessionId)!.parentSessionId).toBe(sessionId);
    } finally {
      after.close();
    }
  });

  it('a request with no related evidence is sent as typed, without a sidecar', async () => {
    const repo = t.repo();
    model.push({ content: 'ok' });
    const r = await t.cli(['run', 'quantum entanglement widgets', '--json'], { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
    expect(r.code, r.stderr).toBe(0);
    expect(model.requests[0]!.messages[1]).toEqual({ role: 'user', content: 'quantum entanglement widgets' });
    const db = new SessionDB(join(t.home, 'state.db'));
    try {
      expect(db.getMessages(r.json().sessionId)[0]!.apiContent).toBeUndefined();
    } finally {
      db.close();
    }
  });
});
