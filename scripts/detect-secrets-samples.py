#!/usr/bin/env python3
"""Extracts detect-secrets' plugin test lines as DATA into test/fixtures/detect-secrets-samples.json.

    python3 scripts/detect-secrets-samples.py <detect-secrets checkout>

Reads tests/plugins/*_test.py with Python's ast module and evaluates only literal
expressions: strings, tuples, lists, names bound to such values at module level, `+`, `%`
and str.format. Nothing of detect-secrets is imported or run. Each parametrized case whose
first value is a string becomes a sample; it is a secret when the second value is True or a
(non-empty) expected secret string, not one when it is False or None. Cases written any other
way are skipped.
"""
import ast
import base64
import json
import os
import sys


class Unsupported(Exception):
    pass


def evaluate(node, env):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        return [evaluate(e, env) for e in node.elts]
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise Unsupported(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return evaluate(node.left, env) + evaluate(node.right, env)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        right = evaluate(node.right, env)
        return evaluate(node.left, env) % (tuple(right) if isinstance(right, list) else right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'format':
        base = evaluate(node.func.value, env)
        if not isinstance(base, str):
            raise Unsupported('format on non-string')
        args = [evaluate(a, env) for a in node.args]
        kwargs = {k.arg: evaluate(k.value, env) for k in node.keywords}
        return base.format(*args, **kwargs)
    if isinstance(node, ast.JoinedStr):
        out = ''
        for v in node.values:
            if isinstance(v, ast.Constant):
                out += v.value
            elif isinstance(v, ast.FormattedValue) and v.format_spec is None and v.conversion == -1:
                out += str(evaluate(v.value, env))
            else:
                raise Unsupported('f-string')
        return out
    raise Unsupported(type(node).__name__)


def main():
    root = sys.argv[1]
    plugins_dir = os.path.join(root, 'tests', 'plugins')
    samples = []
    skipped = 0
    for name in sorted(os.listdir(plugins_dir)):
        if not name.endswith('_test.py'):
            continue
        plugin = name[: -len('_test.py')]
        tree = ast.parse(open(os.path.join(plugins_dir, name)).read())
        env = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    env[node.targets[0].id] = evaluate(node.value, env)
                except Unsupported:
                    pass
        seen = set()
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'parametrize'):
                continue
            if len(node.args) < 2:
                continue
            try:
                cases = evaluate(node.args[1], env)
            except Unsupported:
                skipped += 1
                continue
            for case in cases:
                if not isinstance(case, list) or len(case) < 2 or not isinstance(case[0], str):
                    continue
                text, expected = case[0], case[1]
                if isinstance(expected, bool):
                    secret = expected
                elif expected is None:
                    secret = False
                elif isinstance(expected, str):
                    secret = expected != ''
                else:
                    continue
                if (text, secret) in seen or len(text) > 2000:
                    continue
                seen.add((text, secret))
                samples.append({'plugin': plugin, 'text': text, 'secret': secret})
    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'test', 'fixtures', 'detect-secrets-samples.json')
    with open(target, 'w') as f:
        # base64: the repository holds no contiguous token literal for secret scanners to trip on.
        encoded = [{**s, 'text': base64.b64encode(s['text'].encode('utf-8')).decode('ascii')} for s in samples]
        json.dump({'source': 'see test/fixtures/README.md', 'encoding': 'text is base64 of UTF-8', 'samples': encoded}, f, indent=1, ensure_ascii=False)
        f.write('\n')
    pos = sum(1 for s in samples if s['secret'])
    print(f'wrote {target}: {len(samples)} lines ({pos} secrets, {len(samples) - pos} not), {skipped} parametrize lists skipped')


main()
