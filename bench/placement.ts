/**
 * `npm run bench -- placement`.
 *
 * Accuracy: the rule-based classifier (with the deterministic enforceability check that turns
 * an authority rule into a config rule) on the labelled sentences of test/fixtures/placement/
 * — per owner, overall, on the development set the rules were written against and on the
 * held-out set written afterwards — and how many repository rules it placed in USER.md
 * (goal ≥ 85% correct owner, 0 rules in USER.md).
 *
 * Post-task review never delays an answer: two daemons, one with review on and one with it
 * off, each run the same tasks against one local model server that answers one request at a
 * time after a fixed latency (a local model serving one user, where a review talking to the
 * model would make the next task wait but for the preemption). Tasks alternate between the
 * daemons with the same pauses between them, so a review (when on) starts in the pause and is
 * often still talking to the model when the next task starts (and is preempted). A task's answer time is from sending
 * POST /v1/tasks to its result (goal: review-on median within 5% of review-off, same run).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DaemonClient } from '../src/client/daemon-client.js';
import { ensureDaemon, stopDaemon } from '../src/client/lifecycle.js';
import { resolvePaths } from '../src/paths/index.js';
import { enforceableRule } from '../src/placement/enforce.js';
import { classifyByRules } from '../src/placement/classify-by-rules.js';
import { median, ms, percentile, printNote, printTable, type Bench, type Goal, type Row } from './table.js';

/** Labelled sentences (this file runs as dist/bench/placement.js). */
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'fixtures', 'placement');
const OWNERS = ['authority', 'config-rule', 'user', 'repo-memory', 'skill', 'none'] as const;
const ACCURACY_GOAL = 0.85;

/** Tasks per daemon; each is one tool call and an answer (two model requests). */
const TASKS = Number(process.env.BENCH_PLACEMENT_TASKS ?? 40);
const WARMUP_TASKS = 3;
/** What one model request takes: a small local model's short answer. */
const MODEL_LATENCY_MS = 60;
/**
 * The user's pause between an answer and the next task: from shorter than the review queue's
 * poll (the task comes first, the review waits) to long enough for a review to finish.
 */
const PAUSES_MS = [20, 60, 90, 110, 130, 260, 280, 300, 400];
const REVIEW_GOAL = 0.05;

type Labelled = { sentence: string; owner: string; source: string };

function ruleOwner(sentence: string): string {
  const c = classifyByRules(sentence);
  return c.owner === 'authority' && enforceableRule(sentence) ? 'config-rule' : c.owner;
}

function accuracy(): Goal[] {
  const sets = {
    development: JSON.parse(readFileSync(join(FIXTURES, 'sentences.json'), 'utf8')) as Labelled[],
    'held-out': JSON.parse(readFileSync(join(FIXTURES, 'held-out.json'), 'utf8')) as Labelled[],
  };
  const all = [...sets.development, ...sets['held-out']];
  const t = process.hrtime.bigint();
  const placed = new Map(all.map((s) => [s.sentence, ruleOwner(s.sentence)]));
  const perSentenceUs = Number(process.hrtime.bigint() - t) / 1e3 / all.length;
  const pct = (n: number, of: number) => (of ? `${((100 * n) / of).toFixed(1)}%` : '—');
  const score = (set: Labelled[]) => ({ right: set.filter((s) => placed.get(s.sentence) === s.owner).length, of: set.length });

  const rows: Row[] = OWNERS.map((owner) => {
    const row: Row = { owner };
    for (const [name, set] of Object.entries({ ...sets, all })) {
      const s = score(set.filter((x) => x.owner === owner));
      row[name] = `${pct(s.right, s.of)} (${s.right}/${s.of})`;
    }
    return row;
  });
  const overall: Row = { owner: 'overall' };
  for (const [name, set] of Object.entries({ ...sets, all })) {
    const s = score(set);
    overall[name] = `${pct(s.right, s.of)} (${s.right}/${s.of})`;
  }
  rows.push(overall);
  printTable(`placement: rule-based classifier, correct owner on the labelled set (${all.length} sentences; goal ≥ ${ACCURACY_GOAL * 100}% overall)`, rows);

  const leaked = all.filter((s) => (s.owner === 'authority' || s.owner === 'config-rule') && placed.get(s.sentence) === 'user');
  const confusions = new Map<string, number>();
  for (const s of all) {
    const got = placed.get(s.sentence)!;
    if (got !== s.owner) confusions.set(`${s.owner} → ${got}`, (confusions.get(`${s.owner} → ${got}`) ?? 0) + 1);
  }
  printTable(
    'placement: the rule-based classifier’s mistakes, labelled owner → placed owner',
    [...confusions].sort((a, b) => b[1] - a[1]).map(([pair, n]) => ({ 'labelled → placed': pair, sentences: n })),
  );
  const total = score(all);
  const held = score(sets['held-out']);
  printNote(
    `Repository rules placed in USER.md: ${leaked.length} of ${all.filter((s) => s.owner === 'authority' || s.owner === 'config-rule').length}. ` +
      `Classifying one sentence takes ${perSentenceUs.toFixed(0)} µs (rules and enforceability check).`,
  );
  const rate = total.right / total.of;
  return [
    {
      measure: `rule-based placement, correct owner (${total.of} labelled sentences)`,
      result: `${pct(total.right, total.of)} overall, ${pct(held.right, held.of)} held-out`,
      goal: `≥ ${ACCURACY_GOAL * 100}%`,
      met: rate >= ACCURACY_GOAL,
    },
    { measure: 'rule-based placement, repository rules placed in USER.md', result: String(leaked.length), goal: '0', met: leaked.length === 0 },
  ];
}

/**
 * A local OpenAI-compatible model that answers one request at a time, each after
 * MODEL_LATENCY_MS: a task gets a read_file call and then its answer; a review gets one
 * candidate. A request whose client goes away (a review a task preempted) is dropped at once,
 * as local servers cancel a generation whose connection closed.
 */
async function serialModel(): Promise<{ url: string; counts: { task: number; review: number; dropped: number }; close: () => void }> {
  const counts = { task: 0, review: 0, dropped: 0 };
  const queue: Array<{ res: ServerResponse; body: string }> = [];
  let busy = false;
  const reply = (res: ServerResponse, message: Record<string, unknown>, finish: string) => {
    const body = JSON.stringify({
      id: 'x',
      object: 'chat.completion',
      created: 0,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const answer = (job: { res: ServerResponse; body: string }) => {
    const r = JSON.parse(job.body) as { messages: Array<{ role: string }>; response_format?: { json_schema?: { name?: string } } };
    if (r.response_format?.json_schema?.name === 'review') {
      counts.review++;
      const candidates = [
        {
          owner: 'repo-memory',
          text: 'The README is the only documentation of this repository.',
          reasons: { scope: 'this repository', lifetime: 'until it changes', type: 'fact', readTiming: 'every session here' },
        },
      ];
      reply(job.res, { content: JSON.stringify({ candidates }) }, 'stop');
    } else {
      counts.task++;
      if (r.messages.at(-1)?.role === 'tool') reply(job.res, { content: 'The README documents everything.' }, 'stop');
      else
        reply(
          job.res,
          { content: null, tool_calls: [{ id: `c${counts.task}`, type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }] },
          'tool_calls',
        );
    }
  };
  const next = () => {
    if (busy) return;
    const job = queue.shift();
    if (!job) return;
    if (job.res.closed) {
      counts.dropped++;
      next();
      return;
    }
    busy = true;
    const done = () => {
      clearTimeout(timer);
      job.res.off('close', gone);
      busy = false;
      next();
    };
    const gone = () => {
      counts.dropped++;
      done();
    };
    const timer = setTimeout(() => {
      answer(job);
      done();
    }, MODEL_LATENCY_MS);
    job.res.on('close', gone);
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      queue.push({ res, body });
      next();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, counts, close: () => server.close() };
}

type Daemon = { name: string; client: DaemonClient; stop: () => Promise<unknown>; times: number[] };

async function startDaemon(base: string, name: string, modelUrl: string, review: boolean): Promise<Daemon> {
  const home = join(base, name, 'home');
  const repo = join(base, name, 'repo');
  mkdirSync(home, { recursive: true });
  mkdirSync(repo, { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  writeFileSync(join(repo, 'README.md'), '# demo\nEverything is documented here.\n');
  writeFileSync(
    join(home, 'config.yaml'),
    [
      `model:\n  baseUrl: ${modelUrl}\n  apiKey: bench\n  stream: false`,
      `review:\n  enabled: ${review}\n  minToolCalls: 1`,
      'placement:\n  classifier: model',
      '',
    ].join('\n'),
  );
  const env: NodeJS.ProcessEnv = { ...process.env, HERMES_HOME: home, HERMESD_SOCKET_DIR: join(base, name, 's') };
  delete env.OPENAI_BASE_URL;
  delete env.OPENAI_API_KEY;
  const paths = resolvePaths(repo, env);
  const { status } = await ensureDaemon(paths, env);
  return { name, client: new DaemonClient(status.socket), stop: () => stopDaemon(paths), times: [] };
}

async function task(d: Daemon): Promise<number> {
  const t = process.hrtime.bigint();
  const r = await d.client.stream<{ status: string }>('POST', '/v1/tasks', { task: 'Where is this project documented?' }, () => undefined);
  if (r.status !== 'completed') throw new Error(`bench task on the ${d.name} daemon ended ${r.status}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
}

async function reviewOnOff(): Promise<Goal[]> {
  const base = mkdtempSync(join(tmpdir(), 'hd-bench-placement-'));
  // One model each: a review of one daemon must not slow the other's tasks.
  const models = [await serialModel(), await serialModel()];
  const daemons: Daemon[] = [];
  try {
    daemons.push(await startDaemon(base, 'review-off', models[0]!.url, false), await startDaemon(base, 'review-on', models[1]!.url, true));
    for (let i = 0; i < WARMUP_TASKS + TASKS; i++) {
      // The same pause before each daemon's next task, varied so the next task meets a review in every phase.
      const pauseMs = PAUSES_MS[i % PAUSES_MS.length]!;
      // Alternate which daemon goes first, so they share the machine's noise.
      for (const d of i % 2 ? [...daemons].reverse() : daemons) {
        const took = await task(d);
        if (i >= WARMUP_TASKS) d.times.push(took);
      }
      await new Promise((r) => setTimeout(r, pauseMs));
    }
    const counts = await daemons[1]!.client.call<{ done: number; skipped: number; failed: number }>('GET', '/v1/review');
    const proposals = (await daemons[1]!.client.call<{ proposals: unknown[] }>('GET', '/v1/proposals')).proposals.length;
    const row = (d: Daemon): Row => ({ daemon: d.name, tasks: d.times.length, median: ms(median(d.times), 1), p95: ms(percentile(d.times, 95), 1) });
    const [off, on] = daemons as [Daemon, Daemon];
    const ratio = median(on.times) / median(off.times) - 1;
    printTable(
      `placement: a task's answer time with post-task review on vs off (model ${MODEL_LATENCY_MS} ms per request, one at a time; ${PAUSES_MS[0]}–${PAUSES_MS.at(-1)} ms between tasks; goal within ${REVIEW_GOAL * 100}%)`,
      [row(off), row(on), { daemon: 'on vs off', tasks: '', median: `${ratio >= 0 ? '+' : ''}${(ratio * 100).toFixed(1)}%`, p95: '' }],
    );
    const m = models[1]!.counts;
    printNote(
      `Review on: ${counts.done} reviews done, ${counts.skipped} skipped, ${counts.failed} failed; its model answered ${m.review} review requests and dropped ${m.dropped} that a starting task preempted; ${proposals} pending proposal(s) (the same candidate each time).`,
    );
    return [
      {
        measure: 'task answer time, post-task review on vs off (same run)',
        result: `${ms(median(on.times), 0)} vs ${ms(median(off.times), 0)} median (${ratio >= 0 ? '+' : ''}${(ratio * 100).toFixed(1)}%)`,
        goal: `within ${REVIEW_GOAL * 100}%`,
        met: ratio <= REVIEW_GOAL,
      },
    ];
  } finally {
    for (const d of daemons) {
      d.client.close();
      await d.stop().catch(() => undefined);
    }
    for (const m of models) m.close();
    rmSync(base, { recursive: true, force: true });
  }
}

export const bench: Bench = {
  name: 'placement',
  async run() {
    return [...accuracy(), ...(await reviewOnOff())];
  },
};
