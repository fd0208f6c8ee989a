/**
 * `node --import …/preload.mjs dist/src/server/main.js <repo>`: the daemon with its flow traced.
 * SIGUSR2 starts a recording; the next SIGUSR2 writes it to `$HERMESD_FLOW_TRACE.<n>.json`: for
 * every function of dist/src/ entered meanwhile, its stack as [file under dist/src/, function]
 * pairs, callee first (V8's async frames included, so an awaited chain keeps its callers).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';

register(new URL('./loader.mjs', import.meta.url));

const out = process.env.HERMESD_FLOW_TRACE;
const src = new URL('../../../dist/src/', import.meta.url).href;
const frame = new RegExp(`(?:at (?:async )?(.*?) \\()?${src.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^:]+):\\d+:\\d+`);
let recording;
let written = 0;

process.on('SIGUSR2', () => {
  if (!recording) {
    recording = [];
    Error.stackTraceLimit = 100;
    return;
  }
  // Written whole, then renamed: whoever waits for the file never reads half of it.
  const file = `${out}.${written++}.json`;
  writeFileSync(`${file}.part`, JSON.stringify(recording));
  renameSync(`${file}.part`, file);
  recording = undefined;
  Error.stackTraceLimit = 10;
});

globalThis.__flowEnter = () => {
  if (!recording) return;
  const frames = [];
  for (const line of new Error().stack.split('\n').slice(2)) {
    const m = frame.exec(line);
    if (m) frames.push([m[2], (m[1] ?? '').trim()]);
  }
  recording.push(frames);
};
