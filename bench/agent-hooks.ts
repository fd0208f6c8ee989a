/**
 * `npm run bench -- agent-hooks`: what hermesd's hook adds to an agent's tool call.
 * Each hook is run as an agent runs it — spawned from Node through `sh -c <command>`, the
 * payload written to its stdin, waited for — with its peers, each round in a new random
 * order, so they share the machine's noise: a `sh` hook that does nothing, a Python hook script that reads the
 * payload and checks a path (the form most published guard hooks take), and hermesd's
 * PreToolUse commands as `init --agents claude` wrote them (Write's entry reads the payload with
 * cat, the Bash/Read/Grep entry with the shell's `read`), allowed and refused, warm daemon —
 * through hermesd's client (src/hook-client/client.c) and through curl (src/hook-client/runners/curl.sh,
 * what the runner uses where the client could not be built).
 * Goal: allowed ≤ 15 ms median and ≤ 1.5× the do-nothing sh hook.
 *
 * What a question costs when no daemon runs (the client starts one): bench daemon.
 *
 * Transcript ingest: a Claude Code transcript read into a fresh SessionDB by ingestTranscript,
 * beside the same messages inserted by SessionDB.appendMessages in batches of the same size
 * (goal ≥ 80% of that speed).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestTranscript, TRANSCRIPT_CHUNK_BYTES } from '../src/other-agents/ingest.js';
import { hookCommand } from '../src/other-agents/install.js';
import { parseLines } from '../src/other-agents/transcripts.js';
import { ensureDaemon, stopDaemon } from '../src/client/lifecycle.js';
import { resolvePaths } from '../src/paths/index.js';
import { SessionDB } from '../src/sessions/db.js';
import type { NewMessage } from '../src/sessions/records.js';
import { CLI_ENTRY } from '../src/version.js';
import { median, ms, percentile, printNote, printTable, shuffled, type Bench, type Goal, type Row } from './table.js';

const RUNS = 150;
const WARMUP = 10;
const TRANSCRIPT_LINES = 20_000;
const INGEST_ROUNDS = 6;
/** The goals: an allowed call's hook, warm daemon (median), against the do-nothing sh hook; ingest against raw inserts. */
const ALLOWED_GOAL_MS = 15;
const ALLOWED_GOAL_RATIO = 1.5;
const INGEST_GOAL = 0.8;

/**
 * One hook run as an agent does it: spawn, write the payload, wait for exit. Claude Code runs
 * `sh -c <command>`; Codex 0.171 `<the user's shell> -c <command>` (`/bin/bash -c` here, measured with
 * the real Codex: not a login shell, and not `$SHELL`'s).
 */
function runHook(command: string, payload: string, cwd: string, env: NodeJS.ProcessEnv, shell = 'sh'): Promise<{ ms: number; code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    const child = spawn(shell, ['-c', command], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: Number(process.hrtime.bigint() - t) / 1e6, code: code ?? -1, stdout }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(payload);
  });
}

const PYTHON_GUARD = `import json, sys
data = json.load(sys.stdin)
path = (data.get("tool_input") or {}).get("file_path", "")
if "/src/generated/" in path:
    print("Refused: generated file", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
`;

/** `curl --version`, spawned as the hooks are: what the socket path pays before it sends a byte. */
async function curlStart(cwd: string, env: NodeJS.ProcessEnv): Promise<number> {
  const out: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const r = await runHook('curl --version', '', cwd, env);
    if (i >= WARMUP) out.push(r.ms);
  }
  return median(out);
}

function setup() {
  const base = mkdtempSync(join(tmpdir(), 'hd-bench-agents-'));
  const repo = join(base, 'repo');
  mkdirSync(join(repo, 'src', 'generated'), { recursive: true });
  mkdirSync(join(repo, '.hermes'), { recursive: true });
  mkdirSync(join(repo, '.claude'), { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  writeFileSync(
    join(repo, '.hermes', 'config.yaml'),
    'rules:\n  - id: generated-files\n    message: Do not edit generated files directly; change the schema and run `npm run gen`.\n    protect: ["src/generated/**"]\n',
  );
  writeFileSync(join(repo, 'src', 'generated', 'api.ts'), 'x\n');
  writeFileSync(join(repo, 'noop.sh'), '#!/bin/sh\nexit 0\n');
  writeFileSync(join(repo, 'guard.py'), PYTHON_GUARD);
  const env: NodeJS.ProcessEnv = { ...process.env, HERMES_HOME: join(base, 'home'), HERMESD_SOCKET_DIR: join(base, 's'), CLAUDE_PROJECT_DIR: repo };
  execFileSync(process.execPath, [CLI_ENTRY, 'init', '--agents', 'claude,codex'], { cwd: repo, env, stdio: 'ignore' });
  return { base, repo, env, paths: resolvePaths(repo, env) };
}

function transcriptText(): string {
  const out: string[] = [];
  for (let i = 0; i < TRANSCRIPT_LINES / 4; i++) {
    const id = `u${i}`;
    out.push(
      JSON.stringify({
        type: 'user',
        uuid: `${id}-p`,
        sessionId: 's',
        timestamp: '2026-11-01T10:00:00Z',
        message: { role: 'user', content: `Fix the flaky test number ${i} in the parser module and run the suite again` },
      }),
      JSON.stringify({
        type: 'assistant',
        uuid: `${id}-a`,
        sessionId: 's',
        timestamp: '2026-11-01T10:00:01Z',
        message: {
          role: 'assistant',
          model: 'claude-sonnet-5',
          content: [
            { type: 'text', text: `Looking at test ${i}; the tokenizer drops the trailing quote.` },
            { type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: `npm test -- parser-${i}` } },
          ],
        },
      }),
      JSON.stringify({
        type: 'user',
        uuid: `${id}-r`,
        sessionId: 's',
        timestamp: '2026-11-01T10:00:02Z',
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `PASS parser-${i} (12 tests) in 0.4 s` }] },
      }),
      JSON.stringify({ type: 'progress', uuid: `${id}-x`, data: { note: 'ignored record type' } }),
    );
  }
  return out.join('\n') + '\n';
}

export const bench: Bench = {
  name: 'agent-hooks',
  async run() {
    const { base, repo, env, paths } = setup();
    try {
      await ensureDaemon(paths, env);
      // The two PreToolUse entries init writes: Write/Edit… (the payload read by cat) and Bash/Read/Grep (read by the shell).
      const command = hookCommand('claude', 'PreToolUse');
      const small = hookCommand('claude', 'PreToolUse', true);
      const payload = (tool: string, input: Record<string, unknown>) =>
        JSON.stringify({
          session_id: 'bench',
          transcript_path: join(base, 'none.jsonl'),
          cwd: repo,
          permission_mode: 'default',
          hook_event_name: 'PreToolUse',
          tool_name: tool,
          tool_input: input,
          tool_use_id: 'toolu_1',
        });
      // The runner as a clone without the client has it (curl.sh), sourced as Claude Code's command sources the stub's runner.
      const curlRunner = join(base, 'agent-hook-curl');
      writeFileSync(
        curlRunner,
        readFileSync(join(repo, '.git', 'hermesd', 'agent-hook'), 'utf8').replace(/^HERMESD_CLIENT=.*$/m, "HERMESD_CLIENT='/nonexistent'"),
      );
      const curlCommand = `set -- claude PreToolUse; hermesd_root="$CLAUDE_PROJECT_DIR"; hermesd_gd="$CLAUDE_PROJECT_DIR/.git"; . '${curlRunner}'`;
      // A refusal is exit 0 with the structured deny on stdout (exit 2 is only the runner's own onUnavailable block).
      const refused = 'deny';
      const variants: Array<{ label: string; command: string; payload: string; expect: number; stdout?: string; shell?: string }> = [
        {
          label: 'sh hook that does nothing',
          command: 'sh "$CLAUDE_PROJECT_DIR/noop.sh"',
          payload: payload('Write', { file_path: join(repo, 'src/app.ts'), content: 'x' }),
          expect: 0,
        },
        {
          label: 'Python hook script (reads the payload, checks a path)',
          command: 'python3 "$CLAUDE_PROJECT_DIR/guard.py"',
          payload: payload('Write', { file_path: join(repo, 'src/app.ts'), content: 'x' }),
          expect: 0,
        },
        {
          label: 'hermesd, allowed Write (payload read by cat)',
          command,
          payload: payload('Write', { file_path: join(repo, 'src/app.ts'), content: 'export const a = 1;\n' }),
          expect: 0,
        },
        {
          label: 'hermesd, allowed Bash `npm test` (payload read by the shell)',
          command: small,
          payload: payload('Bash', { command: 'npm test', description: 'Run tests' }),
          expect: 0,
        },
        {
          label: 'hermesd, refused Write (protected path)',
          command,
          payload: payload('Write', { file_path: join(repo, 'src/generated/api.ts'), content: 'x' }),
          expect: 0,
          stdout: refused,
        },
        {
          label: 'hermesd, refused Bash `git push --force` (payload read by the shell)',
          command: small,
          payload: payload('Bash', { command: 'git push --force origin main' }),
          expect: 0,
          stdout: refused,
        },
        {
          label: 'hermesd, allowed Write of a 100 KB file',
          command,
          payload: payload('Write', { file_path: join(repo, 'src/big.ts'), content: 'export const line = 1;\n'.repeat(4_500) }),
          expect: 0,
        },
        {
          label: 'hermesd over curl (no client built), allowed Write',
          command: curlCommand,
          payload: payload('Write', { file_path: join(repo, 'src/app.ts'), content: 'export const a = 1;\n' }),
          expect: 0,
        },
        {
          label: 'hermesd, allowed Bash `git commit -m …` (the git policy judges it)',
          command: small,
          payload: payload('Bash', { command: 'git add src/app.ts && git commit -m "fix the parser"', description: 'Commit' }),
          expect: 0,
        },
        // Codex runs hooks in the user's shell (bash here): its do-nothing hook and hermesd's, the same Bash call.
        {
          label: 'Codex: sh hook that does nothing (`sh noop.sh`, run by bash -c)',
          command: 'sh noop.sh',
          payload: payload('Bash', { command: 'npm test' }),
          expect: 0,
          shell: 'bash',
        },
        {
          label: 'Codex: hermesd, allowed Bash `npm test`',
          command: hookCommand('codex', 'PreToolUse', true),
          payload: payload('Bash', { command: 'npm test' }),
          expect: 0,
          shell: 'bash',
        },
        {
          label: 'Codex: hermesd before (`git rev-parse` for the root, then a second sh)',
          command: `sh "$(git rev-parse --show-toplevel)/.hermes/agent-hook" codex PreToolUse small`,
          payload: payload('Bash', { command: 'npm test' }),
          expect: 0,
          shell: 'bash',
        },
      ];
      const times = variants.map(() => [] as number[]);
      // Each round runs every hook once, in a new random order: no hook always follows the
      // Python one (whose exit leaves the machine busy) or always comes first.
      for (let i = 0; i < WARMUP + RUNS; i++) {
        for (const k of shuffled(variants.map((_, k) => k))) {
          const v = variants[k]!;
          const r = await runHook(v.command, v.payload, repo, env, v.shell);
          if (r.code !== v.expect || (v.stdout !== undefined && !r.stdout.includes(v.stdout)))
            throw new Error(`${v.label}: exit ${r.code}, expected ${v.expect}${v.stdout ? ` and "${v.stdout}" on stdout` : ''}`);
          if (i >= WARMUP) times[k]!.push(r.ms);
        }
      }
      const sh = median(times[0]!);
      const rows: Row[] = variants.map((v, k) => ({
        hook: v.label,
        median: ms(median(times[k]!)),
        p90: ms(percentile(times[k]!, 90)),
        'vs sh hook': `${(median(times[k]!) / sh).toFixed(2)}×`,
        'added over sh hook': ms(median(times[k]!) - sh),
      }));
      printTable(
        `A tool call's hook, spawned as an agent spawns it (sh -c, payload on stdin), warm daemon, ${RUNS} runs each, in a shuffled order each round`,
        rows,
      );
      const allowed = [median(times[2]!), median(times[3]!), median(times[8]!)];
      const refusedMs = [median(times[4]!), median(times[5]!)];
      const claudeAdded = median(times[3]!) - sh;
      const codexAdded = median(times[10]!) - median(times[9]!);
      const curlAlone = await curlStart(repo, env);
      printNote(
        `curl's own start (\`curl --version\`, ${RUNS} runs): ${ms(curlAlone)} median — what the curl path pays before it sends a byte; hermesd's client starts in well under a millisecond.`,
      );

      // Transcript ingest against raw inserts of the same messages.
      const text = transcriptText();
      const file = join(base, 'transcript.jsonl');
      writeFileSync(file, text);
      // The same messages in the same transactions as ingest stores them (one per read chunk, cut at a line end).
      const buf = Buffer.from(text);
      const chunks: NewMessage[][] = [];
      for (let at = 0; at < buf.length; ) {
        let end = Math.min(at + TRANSCRIPT_CHUNK_BYTES, buf.length);
        if (end < buf.length) end = buf.lastIndexOf(10, end - 1) + 1;
        chunks.push(parseLines('claude', buf.subarray(at, end), at).items.map((i) => i.message));
        at = end;
      }
      const messages = chunks.flat();
      const ingestMs: number[] = [];
      const rawMs: number[] = [];
      const ingestOnce = (round: number) => {
        const a = new SessionDB(join(base, `ingest-${round}.db`));
        const t = process.hrtime.bigint();
        const r = ingestTranscript(a, { path: file, agent: 'claude', repo });
        const took = Number(process.hrtime.bigint() - t) / 1e6;
        a.close();
        if (r.stored !== messages.length) throw new Error(`ingest stored ${r.stored}, expected ${messages.length}`);
        return took;
      };
      const rawOnce = (round: number) => {
        const b = new SessionDB(join(base, `raw-${round}.db`));
        const t = process.hrtime.bigint();
        const s = b.createSession({ repo, source: 'claude-code' });
        for (const c of chunks) b.appendMessages(s.id, c);
        const took = Number(process.hrtime.bigint() - t) / 1e6;
        b.close();
        return took;
      };
      // A round each to warm both paths up, then alternating which goes first.
      ingestOnce(-1);
      rawOnce(-1);
      for (let round = 0; round < INGEST_ROUNDS; round++) {
        if (round % 2) {
          rawMs.push(rawOnce(round));
          ingestMs.push(ingestOnce(round));
        } else {
          ingestMs.push(ingestOnce(round));
          rawMs.push(rawOnce(round));
        }
      }
      const ingestRate = messages.length / (median(ingestMs) / 1000);
      const rawRate = messages.length / (median(rawMs) / 1000);
      printTable(
        `Transcript ingest: ${TRANSCRIPT_LINES.toLocaleString('en')} JSONL lines (${messages.length.toLocaleString('en')} messages, ${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB), fresh SessionDB, median of ${INGEST_ROUNDS}`,
        [
          {
            path: 'raw SessionDB.appendMessages (messages parsed beforehand)',
            median: ms(median(rawMs), 0),
            'messages/s': Math.round(rawRate).toLocaleString('en'),
          },
          {
            path: 'ingestTranscript (read, parse, read position)',
            median: ms(median(ingestMs), 0),
            'messages/s': Math.round(ingestRate).toLocaleString('en'),
            'of raw speed': `${((ingestRate / rawRate) * 100).toFixed(0)}%`,
          },
        ],
      );

      const range = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' / ');
      const worst = Math.max(...allowed);
      return [
        {
          measure:
            "another agent's tool call, allowed (Write / Bash `npm test` / Bash `git commit`), through hermesd's hook as the agent spawns it, warm daemon",
          result: `${range(allowed)} ms median; the do-nothing sh hook ${sh.toFixed(1)} ms (${(worst / sh).toFixed(2)}×), over curl ${median(times[7]!).toFixed(1)} ms, a Python hook script ${median(times[1]!).toFixed(0)} ms; refused ${range(refusedMs)} ms`,
          goal: `≤ ${ALLOWED_GOAL_MS} ms, ≤ ${ALLOWED_GOAL_RATIO}× sh`,
          met: worst <= ALLOWED_GOAL_MS && worst <= ALLOWED_GOAL_RATIO * sh,
        },
        {
          measure:
            "Codex's hook command (allowed Bash, run by bash -c as Codex runs it) over Codex's do-nothing hook, against Claude Code's over its do-nothing hook",
          result: `+${codexAdded.toFixed(2)} ms against +${claudeAdded.toFixed(2)} ms (before: +${(median(times[11]!) - median(times[9]!)).toFixed(2)} ms)`,
          goal: "≤ Claude Code's",
          met: codexAdded <= claudeAdded,
        },
        {
          measure: 'transcript ingest vs `SessionDB.appendMessages` of the same messages in the same transactions',
          result: `${((ingestRate / rawRate) * 100).toFixed(0)}% (${Math.round(ingestRate).toLocaleString('en')} vs ${Math.round(rawRate).toLocaleString('en')} messages/s)`,
          goal: `≥ ${INGEST_GOAL * 100}%`,
          met: ingestRate / rawRate >= INGEST_GOAL,
        },
      ] satisfies Goal[];
    } finally {
      await stopDaemon(paths).catch(() => undefined);
      rmSync(base, { recursive: true, force: true });
    }
  },
};
