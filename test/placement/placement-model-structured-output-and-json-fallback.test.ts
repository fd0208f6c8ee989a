/**
 * `remember` with a model (the scripted one): the request carries a strict json_schema
 * response_format and its answer decides the owner; an endpoint that refuses response_format
 * is asked again with the schema only in the prompt and its JSON-in-text answer is parsed
 * strictly; an answer that is not the schema's hands the decision to the rule-based
 * classifier, which says so. Every owner's full path, and the agent's remember tool in a task.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { gitIn, makeEnv, type TestEnv } from '../helpers/env.js';
import { startFakeModel, type ChatRequest, type FakeModel } from '../helpers/fake-model.js';

const reasons = (scope: string) => ({ scope, lifetime: 'durable', type: 'see scope', readTiming: 'next session' });
const answer = (owner: string, extra: Record<string, unknown> = {}) => ({
  owner,
  reasons: reasons(`model says ${owner}`),
  entry: null,
  rule: null,
  skill: null,
  ...extra,
});
const userText = (req: ChatRequest) => String(req.messages.find((m) => m.role === 'user')?.content ?? '');

describe('remember through the model', () => {
  let t: TestEnv;
  let repo: string;
  let model: FakeModel;
  const cli = (...args: string[]) => t.cli(args, { cwd: repo, env: { OPENAI_BASE_URL: model.url } });
  const remember = async (sentence: string) => {
    const r = await cli('remember', sentence, '--json');
    expect(r.code, r.stderr).toBe(0);
    return r.json();
  };

  beforeAll(async () => {
    t = makeEnv();
    model = await startFakeModel();
    repo = t.repo({ 'CLAUDE.md': '# Project\nRun tests with pnpm test.\n' });
  });
  afterEach(() => model.clear());
  afterAll(async () => {
    await t.cleanup();
    await model.close();
  });

  it('asks with a strict json_schema response_format and takes the structured answer', async () => {
    model.push(() => ({ content: JSON.stringify(answer('user', { entry: 'User writes British English' })) }));
    const a = await remember('Please use British spelling with me, whatever the project.');
    const req = model.requests.at(-1)!;
    expect(req.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'placement', strict: true } });
    const schema = (req.response_format as { json_schema: { schema: { required: string[]; additionalProperties: boolean } } }).json_schema.schema;
    expect(schema.required.sort()).toEqual(['entry', 'owner', 'reasons', 'rule', 'skill']);
    expect(schema.additionalProperties).toBe(false);
    expect(req.stream).toBeFalsy();
    expect(userText(req)).toContain('CLAUDE.md');
    expect(a).toMatchObject({
      owner: 'user',
      classifier: 'model',
      reasons: { scope: 'model says user' },
      proposal: { kind: 'memory', change: { target: 'user', content: 'User writes British English' } },
    });
  });

  it('an endpoint that refuses response_format is asked again without it; the JSON in its text is parsed strictly', async () => {
    const before = model.requests.length;
    model.push(
      (req) =>
        req.response_format
          ? { status: 400, body: { error: { message: "Unsupported parameter: 'response_format' of type json_schema", type: 'invalid_request_error' } } }
          : { content: 'unexpected' },
      (req) => ({
        content: req.response_format
          ? '{}'
          : '```json\n' + JSON.stringify(answer('repo-memory', { entry: 'The API server listens on :8080 in development' })) + '\n```',
      }),
    );
    const a = await remember('our api server listens on 8080 when developing');
    expect(model.requests.length - before).toBe(2);
    expect(model.requests[before]!.response_format).toBeDefined();
    expect(model.requests[before + 1]!.response_format).toBeUndefined();
    expect(String(model.requests[before + 1]!.messages[0]!.content)).toContain('Answer with exactly one JSON object');
    expect(a).toMatchObject({
      owner: 'repo-memory',
      classifier: 'model',
      proposal: { change: { scope: 'repo', content: 'The API server listens on :8080 in development' } },
    });
    expect(a.notes.join(' ')).toContain('parsed strictly');

    // The endpoint is remembered: the next request does not try response_format again.
    model.push(() => ({ content: JSON.stringify(answer('none')) }));
    expect((await remember('Fix the flaky test now.')).owner).toBe('none');
    expect(model.requests.at(-1)!.response_format).toBeUndefined();
  });

  it('an answer that is not one JSON object of the schema goes to the rule-based classifier, which says so', async () => {
    model.push(() => ({ content: 'Sure! Here is my answer: {"owner": "user"}' }));
    const prose = await remember('Do not edit generated files directly in this repository.');
    expect(prose).toMatchObject({ owner: 'authority', classifier: 'rules' });
    expect(prose.notes.join(' ')).toContain('not one JSON object');

    model.push(() => ({ content: JSON.stringify({ owner: 'somewhere', reasons: reasons('x'), entry: null, rule: null, skill: null }) }));
    const wrong = await remember('I like short answers, in every project.');
    expect(wrong).toMatchObject({ owner: 'user', classifier: 'rules' });
    expect(wrong.notes.join(' ')).toContain('does not match the schema (owner');
  });

  it('the full path for every owner the model chooses, with the deterministic checks deciding what it cannot', async () => {
    const script: Record<string, object> = {
      'Never edit anything under proto/gen/.': answer('authority', { entry: 'Never edit anything under proto/gen/.' }),
      'Vendored code under third_party/ must stay as upstream ships it.': answer('config-rule', {
        entry: 'Vendored code under third_party/ must stay as upstream ships it.',
        rule: { protect: ['third_party/**'], forbid: null },
      }),
      'Commit messages here must reference a ticket.': answer('authority', { entry: 'Commit messages must reference a ticket.' }),
      'How to cut a release here.': answer('skill', {
        skill: { name: 'cut-release', description: 'Cut a release of this package', steps: ['Run the tests', 'Tag vX.Y.Z', 'Push the tag'] },
      }),
      'We are on step three of the migration.': answer('none'),
      'Run tests with pnpm test.': answer('authority', { entry: 'Run tests with pnpm test.' }),
    };
    model.push(
      ...Object.keys(script).map(() => (req: ChatRequest) => ({
        content: JSON.stringify(script[Object.keys(script).find((s) => userText(req).endsWith(s))!]),
      })),
    );
    const kinds: Record<string, string | undefined> = {};
    const owners: Record<string, string> = {};
    for (const s of Object.keys(script)) {
      const a = await remember(s);
      kinds[s] = a.proposal?.kind;
      owners[s] = a.owner;
    }
    // Enforceable by the rules of enforce.ts, whatever the model said: a config rule.
    expect(owners['Never edit anything under proto/gen/.']).toBe('config-rule');
    // The model's own protect glob, checked against the config schema, when the sentence gives none the rules read.
    expect(kinds['Vendored code under third_party/ must stay as upstream ships it.']).toBe('config-rule');
    expect(kinds['Commit messages here must reference a ticket.']).toBe('authority');
    expect(kinds['How to cut a release here.']).toBe('skill-create');
    expect(kinds['We are on step three of the migration.']).toBeUndefined();
    // The authority file already says it: no proposal.
    expect(owners['Run tests with pnpm test.']).toBe('authority');
    expect(kinds['Run tests with pnpm test.']).toBeUndefined();

    const list = (await cli('proposals', 'list', '--json')).json().proposals;
    const skill = (await cli('proposals', 'show', list.find((p: { kind: string }) => p.kind === 'skill-create').id, '--json')).json();
    expect(skill.change.content).toContain('name: cut-release');
    expect(skill.change.content).toContain('2. Tag vX.Y.Z');
    expect(skill.classifier).toBe('model');
    // Nothing was written anywhere: every proposal waits.
    expect(gitIn(t, repo, 'status', '--porcelain')).toBe('');
    expect(existsSync(join(t.home, 'memories', 'USER.md'))).toBe(false);
    expect(readFileSync(join(repo, 'CLAUDE.md'), 'utf8')).toBe('# Project\nRun tests with pnpm test.\n');
  });

  it('the agent’s remember tool records a proposal during a task and changes nothing', async () => {
    model.push(
      { tool_calls: [{ name: 'remember', arguments: { sentence: 'From now on, the user wants answers in German, in every project.' } }] },
      () => ({ content: JSON.stringify(answer('user', { entry: 'User prefers answers in German' })) }),
      (req) => ({ content: `Noted: ${String(req.messages.at(-1)!.content).match(/"id":"(p-[0-9a-f]+)"/)?.[1] ?? 'no id'}` }),
    );
    const r = await cli('run', 'Remember that I want answers in German everywhere.', '--json');
    expect(r.code, r.stderr).toBe(0);
    const id = /p-[0-9a-f]+/.exec(r.json().answer)?.[0];
    expect(id).toBeDefined();
    const p = (await cli('proposals', 'show', id!, '--json')).json();
    expect(p).toMatchObject({ status: 'pending', owner: 'user', change: { content: 'User prefers answers in German' }, sessionId: r.json().sessionId });
    expect(existsSync(join(t.home, 'memories', 'USER.md'))).toBe(false);
  });
});
