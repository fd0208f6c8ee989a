/**
 * `npm run bench [-- name…]`: runs the benchmarks and prints one table each, with the
 * peer or baseline measured in the same run. Medians, because this machine is shared.
 */
import type { Bench } from './table.js';

const modules: Record<string, () => Promise<{ bench: Bench }>> = {
  agent: () => import('./agent.js'),
  daemon: () => import('./daemon.js'),
  hooks: () => import('./hooks.js'),
  skills: () => import('./skills.js'),
  context: () => import('./context.js'),
  rules: () => import('./rules.js'),
  sessions: () => import('./sessions.js'),
  detectors: () => import('./detectors.js'),
  sandbox: () => import('./sandbox.js'),
  mcp: () => import('./mcp.js'),
  'agent-hooks': () => import('./agent-hooks.js'),
};

const wanted = process.argv.slice(2);
for (const [name, load] of Object.entries(modules)) {
  if (wanted.length && !wanted.includes(name)) continue;
  const { bench } = await load();
  const t = Date.now();
  await bench.run();
  process.stdout.write(`\n(${name}: ${((Date.now() - t) / 1000).toFixed(1)} s)\n`);
}
