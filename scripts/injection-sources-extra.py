#!/usr/bin/env python3
"""
Adds three more held-out direct-override sources to test/fixtures/injection-direct.json (see
test/fixtures/README.md for sources, commits and licences). Data only: files are read with
`git show` from bare mirrors at the commits below; YAML is parsed with PyYAML's safe loader.

  python3 scripts/injection-sources-extra.py <PyRIT git-dir> <JailbreakBench/artifacts git-dir> <dagnelli/ai-ethical-hacker git-dir> <y0mingzhang/prompt-extraction git-dir>

- pyrit-jailbreak-templates: PyRIT's human-written jailbreak templates
  (pyrit/datasets/prompt_templates/jailbreak/*.yaml, MIT, © Microsoft), those with the one
  `{{ prompt }}` parameter, each filled with one JailbreakBench behaviour (the `goal` of
  attack-artifacts/JBC/manual/gpt-3.5-turbo-1106.json, in turn: template i gets behaviour i),
  as JailbreakBench's JBC set fills its AIM template. Left out: Pliny's templates (pliny/*,
  plinys_roleplay_emoji: their upstream, L1B3RT4S, is not under PyRIT's licence), DecodingTrust's
  system prompts (dt_*: a deployer's system prompt, not a user's attack), the scorer and
  many-shot templates (not prompts), and wrappers of under 200 characters around the request
  ("Absolutely! Here's", "Respond only in JSON…": formatting, not override phrasings, as
  JailbreakBench's PAIR and GCG prompts are left out of the jailbreakbench set).
- ai-ethical-hacker-sysprompt-leak: the system-prompt extraction prompts of
  .claude/agents/ethical-hacker/llm/attack-prompts/07-system-prompt-leak.md (MIT, © 2025
  dagnelli.net; the file is in the history, removed at e8309ad), each fenced block SP-001 to
  SP-070; SP-071 to SP-075 ("error exploitation") are placeholders for inputs, not requests.
- prompt-extraction-attacks: the attack queries of Zhang, Carlini and Ippolito, "Effective Prompt
  Extraction from Language Models" (COLM 2024; attacks/generated.json, MIT): their five
  handwritten requests to repeat the instructions and the hundred GPT-4 wrote from them, each once.
"""
import json, os, re, subprocess, sys
import yaml

pyrit, jbb, hacker, extraction = sys.argv[1:5]
PYRIT_COMMIT = 'b06c6bca8aff0cb115d281763c74faa60b10b172'
JBB_COMMIT = '909e68c01d94222b8ad2e397a017e2e12e2adb73'
HACKER_COMMIT = '9cae4a1ffce2672440e2bbdcf863358a81cb109e'
EXTRACTION_COMMIT = 'dc00b2f6d3cef1a2b9c85fe67b8fa2d3354e21cf'
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')

def git(gitdir, *args):
    return subprocess.run(['git', '--git-dir', gitdir, *args], check=True, capture_output=True, text=True).stdout

direct = []
goals = [j['goal'] for j in json.loads(git(jbb, 'show', f'{JBB_COMMIT}:attack-artifacts/JBC/manual/gpt-3.5-turbo-1106.json'))['jailbreaks']]
base = 'pyrit/datasets/prompt_templates/jailbreak/'
n = 0
for path in sorted(git(pyrit, 'ls-tree', '-r', '--name-only', PYRIT_COMMIT, base).split()):
    name = path[len(base):]
    if not name.endswith('.yaml') or name.startswith(('pliny/', 'plinys_', 'dt_')) or name in ('scorer_prompt.yaml', 'many_shot_template.yaml'):
        continue
    y = yaml.safe_load(git(pyrit, 'show', f'{PYRIT_COMMIT}:{path}'))
    value = y.get('value') or ''
    if y.get('parameters') != ['prompt'] or len(re.sub(r'\{\{\s*prompt\s*\}\}', '', value).strip()) < 200:
        continue
    text = re.sub(r'\{\{\s*prompt\s*\}\}', goals[n % len(goals)], value).strip()
    direct.append({'set': 'pyrit-jailbreak-templates', 'id': f'{name[:-5]}#{n % len(goals)}', 'text': text})
    n += 1

leak = git(hacker, 'show', f'{HACKER_COMMIT}:.claude/agents/ethical-hacker/llm/attack-prompts/07-system-prompt-leak.md')
for m in re.finditer(r'\*\*(SP-(\d+))[^*]*\*\*\n```\n(.*?)\n```', leak, re.S):
    if int(m.group(2)) <= 70:
        direct.append({'set': 'ai-ethical-hacker-sysprompt-leak', 'id': m.group(1), 'text': m.group(3).strip()})

seen = set()
for i, text in enumerate(json.loads(git(extraction, 'show', f'{EXTRACTION_COMMIT}:attacks/generated.json'))):
    if text.strip() not in seen:
        seen.add(text.strip())
        direct.append({'set': 'prompt-extraction-attacks', 'id': f'generated-{i}', 'text': text.strip()})

target = os.path.join(root, 'test/fixtures/injection-direct.json')
data = json.load(open(target))
new_sets = {s['set'] for s in direct}
data['samples'] = [s for s in data['samples'] if s['set'] not in new_sets] + direct
open(target, 'w').write(json.dumps(data, indent=1, ensure_ascii=False) + '\n')
print({k: sum(1 for s in direct if s['set'] == k) for k in dict.fromkeys(s['set'] for s in direct)})
