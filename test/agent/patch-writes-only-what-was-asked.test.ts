/**
 * The fuzzy matcher behind `patch` and `skill_manage` patch never writes characters the
 * caller did not ask for outside what new_string changes (DESIGN.md §8). Cases ported from
 * the reference implementation's matcher tests (NousResearch/hermes-agent,
 * tests/tools/test_fuzzy_match.py), aider's edit-block matching and Codex's apply_patch
 * seek sequence, each named after the behaviour it proves.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgentServices } from '../../src/agent/standalone.js';
import { runToolCall, TOOLS } from '../../src/agent/tools/index.js';
import { SkillStore } from '../../src/skills/store.js';
import { fuzzyFindAndReplace, type FuzzyResult } from '../../src/text/fuzzy-replace.js';
import { makeEnv } from '../helpers/env.js';
import { skillMd, tempHome } from '../helpers/skills.js';
import { settled } from '../helpers/settled.js';

const ok = (r: FuzzyResult) => {
  if ('error' in r) throw new Error(`expected a replacement, got: ${r.error}`);
  return r;
};
const err = (r: FuzzyResult) => {
  if (!('error' in r)) throw new Error(`expected a refusal, got: ${JSON.stringify(r.content)}`);
  return r.error;
};

describe('normalisation decides only where the match is', () => {
  it('an ellipsis outside the changed word survives', () => {
    const r = ok(fuzzyFindAndReplace('Wait for it\u2026and done', 'Wait for it...and done', 'Wait for it...then done'));
    expect(r.content).toBe('Wait for it\u2026then done');
  });

  it('an em dash, curly quotes and a plain line in one block all survive when only the last line changes', () => {
    const content = 'Line 1 \u2014 with dash\nLine 2 \u201cquoted\u201d text\nLine 3 plain';
    const r = ok(
      fuzzyFindAndReplace(content, 'Line 1 -- with dash\nLine 2 "quoted" text\nLine 3 plain', 'Line 1 -- with dash\nLine 2 "quoted" text\nLine 3 changed'),
    );
    expect(r.content).toBe('Line 1 \u2014 with dash\nLine 2 \u201cquoted\u201d text\nLine 3 changed');
  });

  it('a unicode minus survives a change to another word of the line', () => {
    const r = ok(fuzzyFindAndReplace('offset = value \u2212 1\nprint(offset)\n', 'offset = value - 1', 'offset = delta - 1'));
    expect(r.strategy).toBe('unicode-normalised');
    expect(r.content).toBe('offset = delta \u2212 1\nprint(offset)\n');
  });

  it('an ideographic space survives in a CJK line', () => {
    const r = ok(fuzzyFindAndReplace('標題\u3000第一章\nbody text\n', '標題 第一章', '標題 第二章'));
    expect(r.strategy).toBe('unicode-normalised');
    expect(r.content).toBe('標題\u3000第二章\nbody text\n');
  });

  it('an em dash in the file matches `--` in old_string, as the reference reads it', () => {
    const r = ok(fuzzyFindAndReplace('return value\u2014fallback', 'return value--fallback', 'return value or fallback'));
    expect(r).toEqual({ content: 'return value or fallback', count: 1, strategy: 'unicode-normalised' });
  });

  it('an em dash in old_string matches `--` in the file', () => {
    const r = ok(fuzzyFindAndReplace('a -- b\nc\n', 'a \u2014 b', 'a \u2014 B'));
    expect(r.content).toBe('a -- B\nc\n');
  });

  it('an em dash also matches a single hyphen when `--` does not', () => {
    const r = ok(fuzzyFindAndReplace('Say \u201chello\u201d \u2014 then wait\u2026\n', 'Say "hello" - then wait...', 'Say "hello" - then go'));
    expect(r.content).toBe('Say \u201chello\u201d \u2014 then go\n');
  });

  it('the caller may still change a typographic character on purpose', () => {
    const r = ok(fuzzyFindAndReplace('a \u2014 b\n', 'a -- b', 'a - b'));
    expect(r.content).toBe('a - b\n');
  });

  it('runs of blanks outside the changed text keep the file spelling', () => {
    const r = ok(fuzzyFindAndReplace('x\nconst  a =\t\t1;\ny\n', 'const a = 1;', 'const a = 2;'));
    expect(r).toEqual({ content: 'x\nconst  a =\t\t2;\ny\n', count: 1, strategy: 'whitespace-normalised' });
  });

  it('a whitespace-normalised match does not swallow the blank after it, and keeps the blanks inside it', () => {
    // test_boundary_space_preserved_after_match
    expect(ok(fuzzyFindAndReplace('foo   bar baz', 'foo bar', 'XY')).content).toBe('XY baz');
    // test_boundary_space_preserved_in_code_edit expects `compute(a, b, c)`: the reference writes
    // new_string as sent. hermesd keeps, on purpose, the file's own spelling of what the edit does
    // not touch (docs/agent.md#patch): the caller added ", c" and never wrote next to the two
    // blanks after "a,", so they stay, as a tab-aligned `x =\t\t1` does. The space after ")" is
    // kept too, which is what the reference case guards.
    expect(ok(fuzzyFindAndReplace('result = compute(a,  b) + tail', 'compute(a, b)', 'compute(a, b, c)')).content).toBe('result = compute(a,  b, c) + tail');
    // test_trailing_ws_still_consumed_when_match_ends_with_space
    expect(ok(fuzzyFindAndReplace('a = foo   + bar', 'foo +', 'XY')).content).toBe('a = XY bar');
  });

  it('a blank the caller writes next to a run of blanks replaces the run: the boundary is never doubled', () => {
    // The caller's "y  =" next to the file's "x  =": two blanks, not the file's two plus the caller's one.
    expect(ok(fuzzyFindAndReplace('x  =  1', 'x = 1', 'y  = 1')).content).toBe('y  =  1');
    expect(ok(fuzzyFindAndReplace('L 1   a = R', '1 a =', '1   a =')).content).toBe('L 1   a = R');
    expect(ok(fuzzyFindAndReplace('L c   )  a R', 'c ) a', 'c  ) a')).content).toBe('L c  )  a R');
    // Blanks the caller leaves alone keep the file's spelling, on both sides of its edit.
    expect(ok(fuzzyFindAndReplace('f(a,  b)', 'f(a, b)', 'f(a, x)')).content).toBe('f(a,  x)');
  });

  it('generated whitespace edits: no run of blanks comes out longer than the file or the caller wrote one', () => {
    // Seeded: tokens joined by runs of 1-3 blanks, quoted with single blanks, then one token
    // changed, one run respaced or one token inserted.
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const words = ['a', 'b', 'c', 'x', '=', '+', '(', ')', 'foo', 'bar', ',', '1', '2'];
    const longest = (text: string) => Math.max(0, ...(text.match(/ +/g) ?? ['']).map((r) => r.length));
    const collapse = (text: string) => text.replace(/ +/g, ' ');
    let applied = 0;
    for (let i = 0; i < 3000; i++) {
      const n = 3 + rnd(4);
      const toks = Array.from({ length: n }, () => words[rnd(words.length)]!);
      const runs = Array.from({ length: n - 1 }, () => ' '.repeat(1 + rnd(3)));
      const content = 'L ' + toks.map((t, k) => t + (runs[k] ?? '')).join('') + ' R';
      const old = toks.join(' ');
      const nt = [...toks];
      const nr = Array.from({ length: n - 1 }, () => ' ');
      const kind = rnd(3);
      if (kind === 0) nt[rnd(n)] = words[rnd(words.length)]!;
      else if (kind === 1) nr[rnd(n - 1)] = ' '.repeat(1 + rnd(3));
      else {
        const k = rnd(n);
        nt.splice(k, 0, words[rnd(words.length)]!);
        nr.splice(k, 0, ' '.repeat(1 + rnd(2)));
      }
      const neu = nt.map((t, k) => t + (nr[k] ?? '')).join('');
      if (neu === old) continue;
      const r = fuzzyFindAndReplace(content, old, neu);
      if ('error' in r) continue;
      applied++;
      const what = JSON.stringify({ content, old, neu, out: r.content });
      expect(collapse(r.content), what).toBe(collapse(`L ${neu} R`));
      expect(longest(r.content), what).toBeLessThanOrEqual(Math.max(longest(content), longest(neu)));
    }
    expect(applied).toBeGreaterThan(2000);
  });

  it('trailing blanks of unchanged lines survive a line-trimmed match', () => {
    const r = ok(fuzzyFindAndReplace('steps:  \n  one \t\n  two\n', 'steps:\n  one', 'steps:\n  zero'));
    expect(r).toEqual({ content: 'steps:  \n  zero\n  two\n', count: 1, strategy: 'line-trimmed' });
  });

  it('a zero-width space the caller could not see survives', () => {
    const r = ok(fuzzyFindAndReplace('name = "a\u200Bb"\nx = 1\n', 'name = "ab"\nx = 1', 'name = "ab"\nx = 2'));
    expect(r.content).toBe('name = "a\u200Bb"\nx = 2\n');
  });
});

describe('re-indentation relative to the matched block', () => {
  it('an unindented replacement inside a method lands at the method body indentation', () => {
    const content = 'class Calculator:\n    def add(self, a, b):\n        result = a + b\n        return result\n';
    const r = ok(fuzzyFindAndReplace(content, 'result = a + b\nreturn result', 'result = a + b\nresult *= 2\nreturn result'));
    expect(r.strategy).toBe('indentation-flexible');
    expect(r.content).toBe('class Calculator:\n    def add(self, a, b):\n        result = a + b\n        result *= 2\n        return result\n');
  });

  it('nesting in new_string is kept relative to the block', () => {
    const content = 'def f():\n    if x:\n        go()\n    end()\n';
    const r = ok(fuzzyFindAndReplace(content, 'if x:\n    go()', 'if y:\n    stop()\n    wait()'));
    expect(r.content).toBe('def f():\n    if y:\n        stop()\n        wait()\n    end()\n');
  });

  it('lines the caller left alone keep their own indentation even when old_string flattened it', () => {
    const content = 'def f():\n        if x:\n            go()\nend\n';
    const r = ok(fuzzyFindAndReplace(content, 'if x:\ngo()', 'if y:\ngo()'));
    expect(r.content).toBe('def f():\n        if y:\n            go()\nend\n');
  });

  it('tab indentation of the file is kept for unchanged lines and used for new ones', () => {
    const content = 'func f() {\n\tif x {\n\t\tgo()\n\t}\n}\n';
    const r = ok(fuzzyFindAndReplace(content, '    if x {\n        go()\n    }', '    if x {\n        go()\n        stop()\n    }'));
    expect(r.content).toBe('func f() {\n\tif x {\n\t\tgo()\n\t    stop()\n\t}\n}\n');
  });
});

describe('blank lines in the span are kept', () => {
  it('a blank line added by new_string stays empty; indented lines are anchored', () => {
    const r = ok(fuzzyFindAndReplace('    a = 1\n    b = 2\n', 'a = 1\nb = 2', 'a = 1\n\nb = 99'));
    expect(r.content).toBe('    a = 1\n\n    b = 99\n');
  });

  it('whitespace-only lines of the file inside the span are written back as they were', () => {
    const content = 'def f():\n    a = 1\n    \n    b = 2\n';
    const r = ok(fuzzyFindAndReplace(content, 'a = 1\n\nb = 2', 'a = 10\n\nb = 2'));
    expect(r.content).toBe('def f():\n    a = 10\n    \n    b = 2\n');
  });
});

describe("the file's line endings are kept", () => {
  it('a CRLF file patched with an LF old_string and new_string stays CRLF throughout', () => {
    const content = 'one\r\ntwo\r\nthree\r\n';
    const r = ok(fuzzyFindAndReplace(content, 'one\ntwo\n', 'one\ntwo and a half\nmore\n'));
    expect(r.content).toBe('one\r\ntwo and a half\r\nmore\r\nthree\r\n');
  });

  it('a single-line edit that adds lines to a CRLF file uses CRLF for them', () => {
    const r = ok(fuzzyFindAndReplace('a\r\nb\r\nc\r\n', 'b', 'b\nb2'));
    expect(r).toEqual({ content: 'a\r\nb\r\nb2\r\nc\r\n', count: 1, strategy: 'exact' });
  });

  it('an LF file is not given CRs when new_string carries CRLF', () => {
    const r = ok(fuzzyFindAndReplace('a\nb\n', 'a\n', 'a\r\nz\r\n'));
    expect(r.content).toBe('a\nz\nb\n');
  });
});

describe('escapes are undone consistently', () => {
  it('a literal \\t in new_string becomes a tab when old_string needed \\t undone, even if new_string holds a real newline', () => {
    const content = 'def hello():\n\tprint("before")\n';
    const r = ok(fuzzyFindAndReplace(content, 'def hello():\n\\tprint("before")\n', 'def hello():\n\\tprint("after")\n'));
    expect(r).toEqual({ content: 'def hello():\n\tprint("after")\n', count: 1, strategy: 'escape-normalised' });
  });

  it('a literal \\t in new_string becomes a tab after an exact match on a tab-indented line', () => {
    const r = ok(fuzzyFindAndReplace('def hello():\n\tprint("before")\n', '\tprint("before")', '\\tprint("after")'));
    expect(r).toEqual({ content: 'def hello():\n\tprint("after")\n', count: 1, strategy: 'exact' });
  });

  it('a literal backslash-t the file really has is left alone', () => {
    const r = ok(fuzzyFindAndReplace('sep = "\\t"\n', 'sep = "\\t"\n', 'sep = "\\tab"\n'));
    expect(r.content).toBe('sep = "\\tab"\n');
  });

  it('a literal \\t stays literal when new_string also holds real tabs', () => {
    const r = ok(fuzzyFindAndReplace('f() {\n\ta()\n}\n', '\ta()', '\ta()\n\tsplit("\\t")'));
    expect(r.content).toBe('f() {\n\ta()\n\tsplit("\\t")\n}\n');
  });

  it('a literal \\n in new_string stays literal when old_string did not need \\n undone', () => {
    const r = ok(fuzzyFindAndReplace('line1\nline2\n', 'line1\nline2', 'alpha\\nbeta'));
    expect(r.content).toBe('alpha\\nbeta\n');
  });

  it('a literal \\r\\n in old_string matches a CRLF file, and new_string is written with real CRLF', () => {
    const r = ok(fuzzyFindAndReplace('line1\r\nline2\r\nline3\r\n', 'line1\\r\\nline2\\r\\n', 'replaced\\r\\n'));
    expect(r).toEqual({ content: 'replaced\r\nline3\r\n', count: 1, strategy: 'escape-normalised' });
  });

  it('a literal \\n in old_string matches a CRLF file and the replacement keeps CRLF', () => {
    const r = ok(fuzzyFindAndReplace('first\r\nsecond\r\nthird\r\n', 'first\\nsecond', 'one\\ntwo'));
    expect(r.content).toBe('one\r\ntwo\r\nthird\r\n');
  });
});

describe('similarity strategies are refused where they would guess', () => {
  it('replace_all with only approximate matches is refused and the file is untouched', () => {
    const content = 'alpha = compute(1)\nbeta = compute(2)\ngamma = compute(3)\n'.repeat(3);
    const e = err(fuzzyFindAndReplace(content, 'alpha = compute(1)\nbeta = compute(9)\ngamma = compute(3)', 'QQ\nRR', true));
    expect(e).toMatch(/replace_all applies only to text that occurs in the file/);
  });

  it('replace_all on a two-line approximate quote rewrites nothing (QQ/RR)', () => {
    expect(err(fuzzyFindAndReplace('aX\nbY\naX\nbY\naX\nbY\n', 'aX\nbZ', 'QQ\nRR', true))).toMatch(/not found/);
  });

  it('a short old_string is never matched by similarity', () => {
    expect(err(fuzzyFindAndReplace('config_value = 100\nthreshold = 200\n', 'config_value = 999\ntotally_unrelated_line_here', 'x'))).toMatch(/not found/);
    expect(err(fuzzyFindAndReplace('a = 1\nb = 2\nc = 3\n', 'a = 1\nb = 3\nc = 3', 'z'))).toMatch(/not found/);
  });

  it('a block whose middle is unrelated does not match on its first and last lines alone', () => {
    const content = "class Foo:\n    completely = 'unrelated'\n    content = 'here'\n    nothing = 'in common'\n    pass\n";
    expect(err(fuzzyFindAndReplace(content, 'class Foo:\n    x = 1\n    y = 2\n    z = 3\n    pass', 'replaced'))).toMatch(/not found/);
  });

  it('a block with one unrelated line is not matched by context', () => {
    const content = 'def load():\n    path = resolve(name)\n    data = read(path)\n    return parse(data)\n';
    expect(
      err(fuzzyFindAndReplace(content, 'def loads():\n    path = resolve(name)\n    cache.invalidate_everything_now()\n    return parse(data)\n', 'x')),
    ).toMatch(/not found/);
    // The same block with every line close is found by context.
    const close = ok(
      fuzzyFindAndReplace(
        content,
        'def loads():\n    path = resolve(name)\n    data = read(paths)\n    return parse(data)\n',
        'def load():\n    return None\n',
      ),
    );
    expect(close).toEqual({ content: 'def load():\n    return None\n', count: 1, strategy: 'context-aware' });
  });

  it('a block close on every line still applies once, and its untouched lines keep the file text', () => {
    const r = ok(fuzzyFindAndReplace('alpha one\nbeta two\ngamma three\n', 'alpha one\nbeta 2\ngamma three', 'alpha one\nbeta TWO\ngamma three'));
    expect(r.strategy).toBe('block-anchor');
    expect(r.content).toBe('alpha one\nbeta TWO\ngamma three\n');
  });

  it('a half-remembered middle line the caller keeps is written as the file has it', () => {
    const content = 'start()\n  step_one(fast)\n  step_two(build_it)\n  step_three()\nfinish()\n';
    const r = ok(
      fuzzyFindAndReplace(
        content,
        'start()\n  step_one(fast)\n  step_2(build)\n  step_three()\nfinish()',
        'begin()\n  step_one(fast)\n  step_2(build)\n  step_three()\nfinish()',
      ),
    );
    expect(r.content).toBe('begin()\n  step_one(fast)\n  step_two(build_it)\n  step_three()\nfinish()\n');
  });
});

describe('quote drift and whitespace-only patterns are refused', () => {
  it("\\' in old_string and new_string but not in the file is refused, file untouched", () => {
    const content = 'header line\n    x = 1\nfooter line\n';
    const e = err(fuzzyFindAndReplace(content, "header line\n  x = \\'a\\'\nfooter line", "header line\n  x = \\'b\\'\nfooter line"));
    expect(e).toMatch(/backslash-escaped in transit/);
  });

  it('\\" drift is refused the same way', () => {
    const e = err(
      fuzzyFindAndReplace('header line\n    x = 1\nfooter line\n', 'header line\n  x = \\"a\\"\nfooter line', 'header line\n  x = \\"b\\"\nfooter line'),
    );
    expect(e).toMatch(/backslash-escaped/);
  });

  it('backslash-quotes the file really has are patched', () => {
    const r = ok(fuzzyFindAndReplace("line\n  x = \\'a\\'\nline", "line\n  x = \\'a\\'\nline", "line\n  x = \\'b\\'\nline"));
    expect(r.content).toBe("line\n  x = \\'b\\'\nline");
  });

  it('a whitespace-only old_string is refused', () => {
    expect(err(fuzzyFindAndReplace('alpha\n   \nbeta\n', '   ', 'XXX'))).toMatch(/only whitespace/);
    expect(err(fuzzyFindAndReplace('alpha\n\nbeta\n', '\n', 'XXX', true))).toMatch(/only whitespace/);
  });

  it('an indentation typo after a fuzzy match on a CRLF file is refused', () => {
    const content = "if (cd >= bestD) continue;\r\n        if (data.cells[k] === 'OBSTACLE') continue;\r\n        bestD = cd; best = cand;\r\n";
    const old = "if (cd >= bestD) continue;\n        if (data.cells[k] === 'OBSTACLE') continue;\n        bestD = cd; best = cand;";
    const typo = 'if (cd >= bestD) continue;\n                const ck = key(cand);\n        bestD = cd; best = cand;';
    expect(err(fuzzyFindAndReplace(content, old, typo))).toMatch(/indentation typo/);
    const right = ok(fuzzyFindAndReplace(content, old, 'if (cd >= bestD) continue;\n        const ck = key(cand);\n        bestD = cd; best = cand;'));
    expect(right.content).toBe('if (cd >= bestD) continue;\r\n        const ck = key(cand);\r\n        bestD = cd; best = cand;\r\n');
  });

  it('new nesting after a fuzzy match on a CRLF file is not taken for a typo', () => {
    const r = ok(fuzzyFindAndReplace('def f():\r\n    a = 1\r\n    b = 2\r\n', 'a = 1\nb = 2', 'a = 1\nif a > 0:\n    b = 2'));
    expect(r.content).toBe('def f():\r\n    a = 1\r\n    if a > 0:\r\n        b = 2\r\n');
  });
});

describe('a failed match names the closest lines with their numbers', () => {
  it('quotes the nearest lines, numbered', () => {
    const e = err(fuzzyFindAndReplace('line1\nline2\ndef foo():\n    pass\n', 'def fooo():\n    pass', 'x'));
    expect(e).toMatch(/not found/);
    expect(e).toMatch(/Closest lines in the file:/);
    expect(e).toMatch(/3\| def foo\(\):/);
    expect(e).toMatch(/4\|     pass/);
  });

  it('shows the whitespace difference when only indentation differs on a line', () => {
    const e = err(fuzzyFindAndReplace('func f() {\n\treturn 1\n}\n', 'return 1\n}\nextra', 'x'));
    expect(e).toMatch(/file has: →return 1/);
    expect(e).toMatch(/you sent: return 1/);
  });

  it('finds the block by its other lines when the first quoted line is not in the file', () => {
    const content = 'const x = 1;\nconst y = 2;\nfunction add(a, b) {\n  return a + b;\n}\n';
    const e = err(fuzzyFindAndReplace(content, '// add two numbers\nfunction add(a, b) {\n  return a - b;\n}', 'x'));
    expect(e).toMatch(/Closest lines in the file:/);
    expect(e).toMatch(/3\| function add\(a, b\) \{/);
    expect(e).toMatch(/4\|   return a \+ b;/);
    // test_finds_similar_line / test_includes_line_numbers; the file's last newline is no line.
    const hint = err(fuzzyFindAndReplace('def foo():\n    pass\ndef bar():\n    return 1\n', 'def baz():\n    return 2', 'x'));
    expect(hint).toMatch(/\d\| def (foo|bar)\(\):/);
    expect(hint).not.toMatch(/\n5\| *$/);
  });

  it('says nothing more when no line is close', () => {
    const e = err(fuzzyFindAndReplace('abc\nxyz\n', 'totally_unique_xyzzy_qux', 'x'));
    expect(e).not.toMatch(/Closest/);
  });

  it('an ambiguous match lists the places with their lines', () => {
    const e = err(fuzzyFindAndReplace('aaa bbb\nccc\naaa ddd\n', 'aaa', 'eee'));
    expect(e).toMatch(/L1: aaa bbb/);
    expect(e).toMatch(/L3: aaa ddd/);
  });
});

describe('replace_all and overlapping patterns', () => {
  it('self-overlapping patterns give non-overlapping matches', () => {
    expect(ok(fuzzyFindAndReplace('aaaa', 'aa', 'b', true))).toEqual({ content: 'bb', count: 2, strategy: 'exact' });
    expect(ok(fuzzyFindAndReplace('prefix aaaa suffix', 'aa', 'b', true)).content).toBe('prefix bb suffix');
    expect(err(fuzzyFindAndReplace('aaaa', 'aa', 'b'))).toMatch(/matches 2 places/);
  });

  it('replace_all through a precise fuzzy strategy keeps each place its own characters', () => {
    const r = ok(fuzzyFindAndReplace('x  =  1;\ny\nx =\t1;\n', 'x = 1;', 'x = 2;', true));
    expect(r).toEqual({ content: 'x  =  2;\ny\nx =\t2;\n', count: 2, strategy: 'whitespace-normalised' });
  });
});

describe('generated edits: the file outside what new_string changes is written back byte for byte', () => {
  // A seeded generator, so a failure reproduces: files with tabs or spaces, trailing blanks,
  // CRLF or LF, typographic characters; the caller quotes a block carelessly (indentation
  // dropped, trailing blanks lost, ASCII for Unicode, LF for CRLF) and changes one line.
  function rng(seed: number) {
    return () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const WORDS = ['value', 'x', '=', 'call(a,', 'b)', '\u2014', 'wait\u2026', '\u201cq\u201d', 'n\u22121', 'a\u3000b', 'return', '{', '}'];
  const ASCII_OF: Record<string, string> = { '\u2014': '--', 'wait\u2026': 'wait...', '\u201cq\u201d': '"q"', 'n\u22121': 'n-1', 'a\u3000b': 'a b' };

  it.each(Array.from({ length: 60 }, (_, i) => i + 1))('seed %i', (seed) => {
    const rand = rng(seed);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    const eol = rand() < 0.4 ? '\r\n' : '\n';
    const unit = rand() < 0.3 ? '\t' : '    ';
    const lines = Array.from({ length: 12 }, (_, i) => {
      const words = Array.from({ length: 2 + Math.floor(rand() * 4) }, () => pick(WORDS));
      return { indent: unit.repeat(1 + Math.floor(rand() * 3)), words: [`id${i}`, ...words], trail: pick(['', '', ' ', '  ', '\t']) };
    });
    const render = (l: (typeof lines)[number]) => l.indent + l.words.join(' ') + l.trail;
    const content = lines.map(render).join(eol) + eol;
    const from = 2 + Math.floor(rand() * 5);
    const count = 3 + Math.floor(rand() * 3);
    const window = lines.slice(from, from + count);
    const dropIndent = rand() < 0.5;
    const quote = (l: (typeof lines)[number]) => (dropIndent ? '' : l.indent) + l.words.map((w) => (rand() < 0.7 ? (ASCII_OF[w] ?? w) : w)).join(' ');
    const quoted = window.map(quote);
    const changed = Math.floor(rand() * count);
    const replacement = quoted.map((q, k) => (k === changed ? q.replace(/id\d+.*/, `changed_${from + k}`) : q));
    const r = ok(fuzzyFindAndReplace(content, quoted.join('\n'), replacement.join('\n')));
    const out = r.content.split(eol);
    expect(out.length, JSON.stringify(r.content)).toBe(lines.length + 1);
    for (let i = 0; i < lines.length; i++) {
      if (i === from + changed) {
        expect(out[i]!.trim()).toBe(`changed_${i}`);
        expect(out[i]!.slice(0, lines[i]!.indent.length)).toBe(lines[i]!.indent);
        expect(out[i]!.slice(lines[i]!.indent.length)).toMatch(/^changed_/);
      } else expect(out[i], `line ${i} (strategy ${r.strategy})`).toBe(render(lines[i]!));
    }
    expect(r.content.replace(/\r\n/g, '')).not.toMatch(eol === '\r\n' ? /\n/ : /\r/);
  });
});

describe('through the patch tool on a real repository', () => {
  it('a CRLF file with typographic characters is written back with only the asked-for change', async () => {
    const t = makeEnv();
    const repo = t.repo({ 'notes.md': 'Title \u2014 draft\r\n\r\n    Wait for it\u2026 then go.  \r\n    Second line\r\n' });
    const services = createAgentServices({ root: repo, home: t.home });
    const ctx = { root: repo, sessionId: 's', signal: new AbortController().signal, config: services.config, services };
    try {
      const call = async (args: unknown) => JSON.parse((await runToolCall(TOOLS, { name: 'patch', arguments: JSON.stringify(args) }, ctx)).content);
      const r = await call({ path: 'notes.md', old_string: 'Wait for it... then go.\nSecond line', new_string: 'Wait for it... then stop.\nSecond line' });
      expect(r).toMatchObject({ replacements: 1, strategy: 'unicode-normalised' });
      expect(readFileSync(join(repo, 'notes.md'), 'utf8')).toBe('Title \u2014 draft\r\n\r\n    Wait for it\u2026 then stop.  \r\n    Second line\r\n');
      writeFileSync(join(repo, 'other.txt'), 'alpha\nbeta\ngamma\n');
      const miss = await call({ path: 'other.txt', old_string: 'betta', new_string: 'x' });
      expect(miss.error).toMatch(/other\.txt: old_string was not found/);
      expect(miss.error).toMatch(/2\| beta/);
    } finally {
      services.sessions.close();
      await t.cleanup();
    }
  });
});

describe('through skill_manage patch', () => {
  it("an unindented quote of an indented step keeps the skill's indentation, em dash and quotes; a miss names the closest lines", async () => {
    const h = tempHome();
    try {
      const store = new SkillStore({ home: h.home });
      const body = 'Steps:\n  1. Run \u201cnpm run gen\u201d \u2014 always from the root.\n  2. Check the diff.\n';
      expect(
        await settled(() => store.manage({ action: 'create', name: 'regen', content: skillMd('regen', 'Regenerate code', body) }, { sessionId: 's' })),
      ).toMatchObject({ success: true });
      const r = await settled(() =>
        store.manage(
          {
            action: 'patch',
            name: 'regen',
            old_string: '1. Run "npm run gen" -- always from the root.\n2. Check the diff.',
            new_string: '1. Run "npm run gen" -- always from the root.\n2. Check the diff for manual edits.',
          },
          { sessionId: 's' },
        ),
      );
      expect(r).toMatchObject({ success: true, replacements: 1 });
      const file = readFileSync(join(h.skills, 'regen', 'SKILL.md'), 'utf8');
      expect(file).toContain('Steps:\n  1. Run \u201cnpm run gen\u201d \u2014 always from the root.\n  2. Check the diff for manual edits.\n');
      const miss = await settled(() =>
        store.manage({ action: 'patch', name: 'regen', old_string: '2. Check the dif for edits', new_string: 'x' }, { sessionId: 's' }),
      );
      expect(miss).toMatchObject({ success: false, kind: 'invalid' });
      expect((miss as { error: string }).error).toMatch(/not found/);
      expect((miss as { error: string }).error).toMatch(/7\|   2\. Check the diff for manual edits\./);
    } finally {
      h.cleanup();
    }
  });
});
