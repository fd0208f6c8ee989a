/**
 * Red team, the daemon itself: a rename storm costs time, never the daemon (status keeps
 * answering within a second and the watcher's child processes stay few), and a hook that
 * cannot reach the daemon while an agent task runs fails closed for that task's commit,
 * while the user's own commit goes ahead as hooks.onUnavailable says.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redTeam, terminal, type RedTeam } from './helpers/redteam.js';

const CONFIG = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
hooks:
  timeoutMs: 1500
`;

let rt: RedTeam;
beforeAll(async () => {
  rt = await redTeam({ config: CONFIG, files: { 'notes.md': 'notes\n', 'src/a.ts': 'a\n' } });
}, 120_000);
afterAll(async () => rt?.close());

/** Children of `pid` right now (from /proc). */
function childrenOf(pid: number): number {
  let n = 0;
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) n++;
    } catch {
      // exited
    }
  }
  return n;
}

describe('the daemon under attack', () => {
  it('a rename storm: status answers within 1 s throughout, child processes stay bounded', async () => {
    const pid = rt.daemonPid();
    await new Promise((r) => setTimeout(r, 300));
    const storm = spawn(process.execPath, [
      '-e',
      `const fs=require('fs');const r=${JSON.stringify(rt.repo)};const end=Date.now()+4000;
       for(let i=0;i<300;i++)fs.mkdirSync(r+'/storm'+i,{recursive:true});
       let k=0;while(Date.now()<end){const i=k%300;const a=r+'/storm'+i,b=r+'/gust'+i;try{fs.renameSync(a,b);fs.renameSync(b,a);}catch{}k++}`,
    ]);
    const stormDone = new Promise((r) => storm.on('exit', r));
    let worstMs = 0;
    let mostChildren = 0;
    let probes = 0;
    let failures = 0;
    let done = false;
    void stormDone.then(() => (done = true));
    while (!done) {
      const t0 = Date.now();
      try {
        await rt.client.call('GET', '/v1/status', undefined, { timeoutMs: 1_000 });
      } catch {
        failures++;
      }
      worstMs = Math.max(worstMs, Date.now() - t0);
      mostChildren = Math.max(mostChildren, childrenOf(pid));
      probes++;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(probes).toBeGreaterThan(5);
    expect(failures, `worst status answer ${worstMs} ms`).toBe(0);
    expect(mostChildren).toBeLessThanOrEqual(8);
    // And it settles: the storm's directories are noticed, and the daemon is still itself.
    expect((await rt.client.call<{ pid: number }>('GET', '/v1/status', undefined, { timeoutMs: 1_000 })).pid).toBe(pid);
    spawnSync('sh', ['-c', 'rm -rf storm* gust*'], { cwd: rt.repo });
  }, 60_000);

  it("a hook that cannot reach the daemon fails closed for the task's commit, open for the user's", async () => {
    const pid = rt.daemonPid();
    const head = rt.g('rev-parse', 'HEAD');
    const stopFor = async (ms: number) => {
      process.kill(pid, 'SIGSTOP');
      try {
        await new Promise((r) => setTimeout(r, ms));
      } finally {
        process.kill(pid, 'SIGCONT');
      }
    };

    // The user's own commit while the daemon is stopped: hooks.onUnavailable (allow) decides.
    writeFileSync(join(rt.repo, 'notes.md'), 'notes\nuser\n');
    rt.g('add', 'notes.md');
    process.kill(pid, 'SIGSTOP');
    let user: { status: number | null; stderr: string };
    try {
      user = spawnSync('git', ['commit', '-qm', 'user commit'], { cwd: rt.repo, env: rt.env, encoding: 'utf8', timeout: 30_000 });
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(user.status, user.stderr).toBe(0);
    const userCommit = rt.g('rev-parse', 'HEAD');
    expect(userCommit).not.toBe(head);

    // The agent's commit while the daemon is stopped: the hook cannot reach it, and this commit stops.
    writeFileSync(join(rt.repo, 'notes.md'), 'notes\nuser\nagent\n');
    rt.g('add', 'notes.md');
    let stopping: Promise<void> | undefined;
    const run = await rt.attack('fail-closed', [[terminal('sleep 1; git commit -qm agent-commit; echo "commit exit $?"')]], {
      onEvent: (e) => {
        if (e.type === 'tool_call' && !stopping) stopping = new Promise((r) => setTimeout(r, 300)).then(() => stopFor(8_000));
      },
    });
    await stopping;
    const said = run.results.join('\n');
    expect(rt.g('rev-parse', 'HEAD'), said).toBe(userCommit);
    expect(said).toMatch(/commit exit [1-9]/);
  }, 60_000);
});
