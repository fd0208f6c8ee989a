/**
 * The push broker's reading of `git push` arguments, as a table: what it passes to git,
 * and what it refuses (force in every spelling, deletes, options that run programs or
 * push elsewhere, remotes that are not configured).
 */
import { describe, expect, it } from 'vitest';
import { gitPolicyOf } from '../../src/guard/guard-config.js';
import { planPush } from '../../src/guard/push-broker.js';

const remotes = new Map([['origin', ['/srv/repo.git', 'https://example.com/repo.git']]]);
const refuse = gitPolicyOf(undefined);
const allowForce = gitPolicyOf({ guard: { gitPolicy: { forcePush: 'allow' } } });

const refused: Array<[string, string[], string]> = [
  ['--force', ['--force', 'origin', 'main'], 'forcePush'],
  ['-f in a cluster', ['-qf', 'origin', 'main'], 'forcePush'],
  ['--force-w abbreviation', ['--force-w', 'origin', 'main'], 'forcePush'],
  ['--force-with-lease=', ['--force-with-lease=main:abc', 'origin', 'main'], 'forcePush'],
  ['--force-if-includes', ['--force-if-includes', 'origin', 'main'], 'forcePush'],
  ['+refspec', ['origin', '+main'], 'forcePush'],
  ['+refspec after --', ['--', 'origin', '+HEAD~1:main'], 'forcePush'],
  ['delete by :dst', ['origin', ':release'], 'forcePush'],
  ['--delete', ['--delete', 'origin', 'release'], 'forcePush'],
  ['--mirror', ['--mirror', 'origin'], 'forcePush'],
  ['--prune', ['--prune', 'origin', 'refs/heads/*'], 'forcePush'],
  ['--no-verify', ['--no-verify', 'origin', 'main'], 'noVerify'],
  ['--receive-pack runs a program', ['--receive-pack=sh -c evil', 'origin', 'main'], 'broker'],
  ['--exec', ['--exec=evil', 'origin'], 'broker'],
  ['-o push option', ['-o', 'ci.skip', 'origin'], 'broker'],
  ['an unknown URL', ['https://evil.example/x.git', 'main'], 'broker'],
  ['an ext:: transport', ['ext::sh -c evil', 'main'], 'broker'],
];

describe('push broker plan', () => {
  it.each(refused)('refuses %s', (_name, args, policy) => {
    const plan = planPush(args, { remotes, policy: refuse });
    expect(plan.ok).toBe(false);
    if (!plan.ok) expect(plan.policy).toBe(policy);
  });

  it('passes a plain push, by remote name or by its URL', () => {
    expect(planPush(['-u', 'origin', 'main'], { remotes, policy: refuse })).toEqual({ ok: true, remote: 'origin', refspecs: ['main'], flags: ['-u'] });
    expect(planPush(['-q', 'https://example.com/repo.git', 'HEAD:refs/heads/x'], { remotes, policy: refuse })).toEqual({
      ok: true,
      remote: 'origin',
      refspecs: ['HEAD:refs/heads/x'],
      flags: ['-q'],
    });
    expect(planPush([], { remotes, policy: refuse })).toEqual({ ok: true, remote: undefined, refspecs: [], flags: [] });
  });

  it('forcePush: allow passes force through', () => {
    expect(planPush(['--force', 'origin', '+main'], { remotes, policy: allowForce })).toEqual({
      ok: true,
      remote: 'origin',
      refspecs: ['+main'],
      flags: ['--force'],
    });
  });
});
