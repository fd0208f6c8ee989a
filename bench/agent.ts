/**
 * Daemon-side overhead of one model turn: everything the agent does around the model —
 * prompt build (once per session), turn-only recall over SessionDB, logging every message,
 * tool dispatch (validate, run, serialise), the request the SDK builds — with a 1,000-skill
 * index and a SessionDB of 1,000,000 messages. The model answers instantly (an in-process
 * client), so what is timed is ours. The peer, measured in the same run: a bare `openai` SDK
 * call to a local OpenAI-compatible server, against the same call made by the full loop.
 * Goal: ≤ 20 ms per turn. `BENCH_AGENT_MESSAGES=200000 npm run bench -- agent` for a quicker run.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import OpenAI from 'openai';
import { runTask, type AgentDeps } from '../src/agent/loop.js';
import { createModelClient, modelSettings, type AssistantTurn, type ModelClient } from '../src/model/client.js';
import { sessionLog } from '../src/agent/session-log.js';
import { recallFrom } from '../src/sessions/recall.js';
import { createAgentServices } from '../src/agent/standalone.js';
import { runToolCall, TOOLS } from '../src/agent/tools/index.js';
import { ContextBuilder } from '../src/context/builder.js';
import { SessionDB } from '../src/sessions/db.js';
import { SkillStore } from '../src/skills/store.js';
import { rng } from './table.js';
import { median, ms, percentile, printNote, printTable, timeRuns, type Bench, type Goal, type Row } from './table.js';

const TOTAL_MESSAGES = Number(process.env.BENCH_AGENT_MESSAGES ?? 1_000_000);
const MESSAGES_PER_SESSION = 50;
const SKILLS = 1_000;
const TASKS = 30;
/** Model calls per benchmark task: two with a tool call each, then the answer. */
const TURNS_PER_TASK = 3;
const GOAL_MS = 20;

const WORDS = (
  'test build error failed parser tokenizer config module import export function return value string number ' +
  'commit branch merge rebase hook daemon session memory skill rule context prompt model tool lint format npm ' +
  'node python cargo docker deploy server client request response timeout retry cache index search query file ' +
  'path directory symlink permission denied missing expected received snapshot fixture mock coverage flaky'
).split(' ');

function text(rand: () => number, words = 30): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    const r = rand();
    out.push(r < 0.02 ? `E${Math.floor(rand() * 1e6)}` : r < 0.3 ? `w${Math.floor(rand() * rand() * 50_000)}` : WORDS[Math.floor(rand() * WORDS.length)]!);
  }
  return out.join(' ');
}

/** Raw prepared INSERTs (the same triggers fill both FTS indexes), 200 sessions per commit: seeding is not what is measured. */
function seedSessions(db: SessionDB, repo: string, total: number): void {
  const rand = rng(7);
  const raw = db.db;
  const insS = raw.prepare('INSERT INTO sessions (id, repo, source, started_at) VALUES (?, ?, ?, ?)');
  const insM = raw.prepare('INSERT INTO messages (session_id, role, content, tool_name, tool_call_id, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const sessions = Math.ceil(total / MESSAGES_PER_SESSION);
  const now = new Date().toISOString();
  const commit = raw.transaction((from: number, to: number) => {
    for (let s = from; s < to; s++) {
      const id = `seed-${s}`;
      insS.run(id, s % 5 === 0 ? repo : `/work/other-${s % 5}`, 'cli', now);
      for (let i = 0; i < MESSAGES_PER_SESSION; i++) {
        const role = (['user', 'assistant', 'tool', 'assistant'] as const)[i % 4]!;
        insM.run(id, role, text(rand), role === 'tool' ? 'terminal' : null, role === 'tool' ? `c${i}` : null, now);
      }
    }
  });
  for (let s = 0; s < sessions; s += 200) commit.immediate(s, Math.min(sessions, s + 200));
}

function seedSkills(home: string): void {
  for (let i = 0; i < SKILLS; i++) {
    const dir = join(home, 'skills', `cat-${i % 20}`, `skill-${i}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'SKILL.md'),
      `---\nname: skill-${i}\ndescription: How to handle recurring job number ${i} in a repository.\n---\n\nStep one. Step two.\n`,
    );
  }
}

/** A model that answers at once: read a file twice, then answer. Only our side is timed. */
function instantModel(turns = TURNS_PER_TASK): ModelClient {
  let n = 0;
  return {
    settings: modelSettings({ name: 'instant' }, {}),
    async complete(): Promise<AssistantTurn> {
      n++;
      if (n % turns === 0) return { content: 'The parser test fails because of the tokenizer cache.', toolCalls: [], finishReason: 'stop' };
      return { content: '', toolCalls: [{ id: `c${n}`, name: 'read_file', arguments: JSON.stringify({ path: 'src/parser.ts' }) }], finishReason: 'tool_calls' };
    },
  };
}

async function localServer(): Promise<{ url: string; close: () => void }> {
  const body = JSON.stringify({
    id: 'x',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => server.close() };
}

async function run(): Promise<Goal[]> {
  const base = mkdtempSync(join(tmpdir(), 'hd-bench-agent-'));
  try {
    const home = join(base, 'home');
    const repo = join(base, 'repo');
    mkdirSync(join(repo, 'src'), { recursive: true });
    execFileSync('git', ['init', '-q', repo]);
    writeFileSync(join(repo, 'src', 'parser.ts'), 'export function parse(s: string) {\n  return s.split(" ");\n}\n'.repeat(40));
    writeFileSync(join(repo, 'AGENTS.md'), '# Rules\n\nDo not edit generated files directly.\n');
    mkdirSync(home, { recursive: true });

    let t = Date.now();
    seedSkills(home);
    const skillsMs = Date.now() - t;
    const db = new SessionDB(join(home, 'state.db'), { durability: 'normal' });
    t = Date.now();
    seedSessions(db, repo, TOTAL_MESSAGES);
    const seedMs = Date.now() - t;
    printNote(
      `Seeded ${SKILLS.toLocaleString('en')} skills in ${skillsMs} ms, ${TOTAL_MESSAGES.toLocaleString('en')} messages in ${(seedMs / 1000).toFixed(1)} s.`,
    );

    const services = createAgentServices({ root: repo, home, db });
    services.memory.global.add('memory', 'Project uses vitest; run npm test.');
    const skills = new SkillStore({ home, repoRoot: repo });
    const builder = new ContextBuilder({ root: repo, home, memorySnapshot: () => services.memory.snapshot(), skillIndex: () => skills.indexText() });

    t = performance.now();
    const first = await builder.build();
    const coldPrompt = performance.now() - t;
    const warmPrompt = await timeRuns(20, () => builder.build());

    const recall = recallFrom(db, repo);
    const request = 'why does the parser test fail with w4242 in the tokenizer cache?';
    const recallHits = recall(request, new Set()).length;
    const recallTimes = await timeRuns(30, () => recall(request, new Set()));
    const commonTimes = await timeRuns(30, () => recall('why does the parser test fail in the tokenizer cache?', new Set()));

    const probe = db.createSession({ repo, source: 'bench' });
    const appendTimes = await timeRuns(200, () => db.appendMessage(probe.id, { role: 'assistant', content: text(rng(1)) }));

    const toolCtx = { root: repo, sessionId: probe.id, signal: new AbortController().signal, config: services.config, services };
    const toolTimes = await timeRuns(100, () => runToolCall(TOOLS, { name: 'read_file', arguments: '{"path":"src/parser.ts"}' }, toolCtx));

    const deps = (model: ModelClient): AgentDeps => ({
      model,
      tools: TOOLS,
      log: sessionLog(db, repo),
      buildPrompt: () => builder.build(),
      recall,
      toolContext: (sessionId, signal) => ({ root: repo, sessionId, signal, config: services.config, services }),
      maxTurns: 10,
    });
    const instant = deps(instantModel());
    const taskTimes = await timeRuns(TASKS, async () => {
      const r = await runTask(instant, {
        task: 'Why does the parser test fail with w4242? Check the tokenizer cache.',
        source: 'bench',
        signal: new AbortController().signal,
      });
      if (r.status !== 'completed' || r.turns !== TURNS_PER_TASK) throw new Error(`bench task ended ${r.status} after ${r.turns} turns`);
    });
    const perTurn = taskTimes.map((x) => x / TURNS_PER_TASK);
    // Marginal cost of one more model turn (no prompt build, no recall): a turn of the loop alone.
    const longer = deps(instantModel(2 * TURNS_PER_TASK));
    const longTimes = await timeRuns(TASKS, async () => {
      const r = await runTask(longer, {
        task: 'Why does the parser test fail with w4242? Check the tokenizer cache.',
        source: 'bench',
        signal: new AbortController().signal,
      });
      if (r.turns !== 2 * TURNS_PER_TASK) throw new Error(`bench task ended ${r.status} after ${r.turns} turns`);
    });
    const marginal = Math.max(0, (median(longTimes) - median(taskTimes)) / TURNS_PER_TASK);

    // Peer: the same SDK call bare, and made by the loop's client (request building, SSE/JSON parsing, retries wrapper).
    const server = await localServer();
    const sdk = new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });
    const msgs = [
      { role: 'system' as const, content: first.system },
      { role: 'user' as const, content: 'hello' },
    ];
    const bare = await timeRuns(50, () => sdk.chat.completions.create({ model: 'm', messages: msgs }));
    const client = createModelClient(modelSettings({ baseUrl: server.url, apiKey: 'k', name: 'm', stream: false }, {}));
    const ours = await timeRuns(50, () =>
      client.complete({ messages: msgs, tools: TOOLS.map((x) => ({ type: 'function' as const, function: { name: x.name, parameters: {} } })) }),
    );
    server.close();

    const row = (what: string, xs: number[], per: string): Row => ({ step: what, per, median: ms(median(xs)), p95: ms(percentile(xs, 95)) });
    printTable(`agent: daemon-side overhead per model turn (${SKILLS} skills, ${TOTAL_MESSAGES.toLocaleString('en')} messages; goal ≤ ${GOAL_MS} ms)`, [
      { step: `prompt build, cold (${first.system.length.toLocaleString('en')} chars)`, per: 'session', median: ms(coldPrompt), p95: '' },
      row('prompt build, warm caches', warmPrompt, 'session'),
      row(`recall search, rare word (${TOTAL_MESSAGES.toLocaleString('en')}-message FTS, this repo, ${recallHits} hits)`, recallTimes, 'user turn'),
      row('recall, common words only (vocabulary says: skip)', commonTimes, 'user turn'),
      row('SessionDB append (one message, committed)', appendTimes, 'message'),
      row('tool dispatch: read_file (validate, run, serialise)', toolTimes, 'tool call'),
      row(`full loop, instant model (task of ${TURNS_PER_TASK} turns ÷ ${TURNS_PER_TASK})`, perTurn, 'model turn'),
      { step: 'one more model turn (marginal: loop, log, tool; no prompt, no recall)', per: 'model turn', median: ms(marginal), p95: '' },
      row('peer: bare openai SDK call to a local server', bare, 'call'),
      row('our model client, same call (+ tool specs, retry wrapper)', ours, 'call'),
    ]);
    const met = median(perTurn) <= GOAL_MS;
    printNote(
      `Full-loop overhead per model turn (prompt + recall amortised over ${TURNS_PER_TASK} turns): median ${ms(median(perTurn))}, p95 ${ms(percentile(perTurn, 95))} — ${met ? 'meets' : 'MISSES'} the ${GOAL_MS} ms goal; marginal turn ${ms(marginal)}.`,
    );
    db.close();
    return [
      {
        measure: `daemon-side overhead per model turn, ${SKILLS.toLocaleString('en')} skills + ${TOTAL_MESSAGES.toLocaleString('en')} messages`,
        result: `${ms(median(perTurn))} median, ${ms(percentile(perTurn, 95), 1)} p95`,
        goal: `≤ ${GOAL_MS} ms`,
        met,
      },
    ] satisfies Goal[];
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

export const bench: Bench = { name: 'agent', run };
