/**
 * Detector benchmark: recall and false-positive rate per corpus family, for the
 * current detectors beside the pre-issue ones (frozen in bench/baseline/), gitleaks' rules
 * (the same data, evaluated with gitleaks' semantics), secretlint's recommended preset, and the
 * reference implementation's threat patterns — all on the same inputs (test/fixtures/). Then
 * the cost of redaction per MB of tool output, today's beside the pre-issue one, interleaved
 * round by round so machine noise hits both alike.
 * Goals: in context ≥ 98%; values ≥ gitleaks; gitleaks' negatives ≤ 5%; override phrasings
 * ≥ 90% (was 80%), in corpus and on every source left out (the injection model retrained
 * without it: bench/injection-train.ts); benign documents and skills 0; cost ≤ 2× the earlier
 * redaction.
 * Then the `secrets` rule kind on the same samples as a commit sees them: each
 * sample a file staged in a real repository, judged by `checkStaged` as pre-commit judges it.
 * Goals: ≥ 98% of the samples in context refused, ≤ 2% of gitleaks' negatives refused.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lintSource } from '@secretlint/core';
import { creator as secretlintRecommend } from '@secretlint/secretlint-rule-preset-recommend';
import { configSchema } from '../src/config/schema.js';
import { checkStaged } from '../src/rules/engine.js';
import { redactForStorage } from '../src/security/prefilter.js';
import { redactSecrets } from '../src/security/redact.js';
import { findWithRules } from '../src/security/gitleaks.js';
import { GITLEAKS_VERSION } from '../src/security/gitleaks-rules.js';
import { INJECTION_MODEL_ID, scanText, type ThreatScope } from '../src/security/scan.js';
import { scanSkillText } from '../src/skills/skill-scan.js';
import * as scanBefore from './baseline/scan-before.js';
import * as secretsBefore from './baseline/secrets-before.js';
import { CONTEXT, MEMORY, referenceHits, SKILL } from './baseline/hermes-agent-patterns.js';
import { leaveOneSourceOut, modelFlags, patternsFlag } from './injection-train.js';
import {
  benignDocuments,
  benignGuideSentences,
  benignParagraphs,
  benignPrompts,
  benignSentences,
  benignTraining,
  bySource,
  detectSecretsCorpus,
  fixturesDir,
  gitleaksCorpus,
  HALVED_SOURCES,
  heldOutSamples,
  indirectInstructions,
  looSource,
  overridePhrasings,
  PATTERNS_GROWN_ON,
  withoutNearDuplicates,
  realSkills,
} from './detector-corpus.js';
import { median, printTable, type Bench, type Goal } from './table.js';

const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}% (${n}/${of})`;
const share = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}%`;

/** The detectors' goals (see above), as fractions. */
const IN_CONTEXT_GOAL = 0.98;
const NEGATIVES_GOAL = 0.05;
/** The secrets rule on commits: a refused negative stops someone's commit, so fewer than redaction may flag. */
const COMMIT_NEGATIVES_GOAL = 0.02;
const OVERRIDES_GOAL = 0.9;
const COST_RATIO_GOAL = 2;

type Counts = { inContext: number; values: number; negatives: number };

/** A detector judges a whole family at once (secretlint is asked once per family: see below). */
type SecretDetector = {
  name: string;
  flags: (texts: string[]) => Promise<boolean[]> | boolean[];
  removes?: (text: string, value: string | undefined) => boolean;
};

const SECRETLINT_CONFIG = { rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: secretlintRecommend }] };
/**
 * secretlint on every sample of a family, in ONE call: the samples are joined by blank lines
 * and each reported range is mapped back to its sample. (Called per sample, secretlint's
 * profiler keeps every performance mark and slows down quadratically.)
 */
async function secretlintFlags(texts: string[]): Promise<boolean[]> {
  const SEP = '\n\n\n';
  const starts: number[] = [];
  let content = '';
  for (const t of texts) {
    starts.push(content.length);
    content += t + SEP;
  }
  const r = await lintSource({ source: { filePath: '/samples.txt', content, contentType: 'text' }, options: { config: SECRETLINT_CONFIG } });
  const out = texts.map(() => false);
  for (const m of r.messages) {
    const at = m.range[0];
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    out[lo] = true;
  }
  return out;
}

const each = (f: (t: string) => boolean) => (texts: string[]) => texts.map(f);

const SECRET_DETECTORS: SecretDetector[] = [
  {
    name: 'hermesd before (bench/baseline)',
    flags: each((t) => secretsBefore.redactSecrets(t).redactions.length > 0),
    removes: (t, v) => (v ? !secretsBefore.redactSecrets(t).text.includes(v) : secretsBefore.redactSecrets(t).text !== t),
  },
  {
    name: 'hermesd now',
    flags: each((t) => redactSecrets(t).redactions.length > 0),
    removes: (t, v) => (v ? !redactSecrets(t).text.includes(v) : redactSecrets(t).text !== t),
  },
  { name: `gitleaks ${GITLEAKS_VERSION} rules`, flags: each((t) => findWithRules(t).length > 0) },
  { name: 'secretlint preset-recommend 11.7.1', flags: secretlintFlags },
];

async function count(d: SecretDetector, texts: string[]): Promise<number> {
  return (await d.flags(texts)).filter(Boolean).length;
}

async function secretTable(): Promise<Goal[]> {
  const g = gitleaksCorpus();
  // gitleaks' negatives that no gitleaks rule flags: a negative for one rule can be another's positive.
  const negatives = g.falsePositives.filter((s) => findWithRules(s.text).length === 0);
  const ds = detectSecretsCorpus();
  const dsSecrets = ds.filter((l) => l.secret);
  const dsPlain = ds.filter((l) => !l.secret);
  const rows = [];
  const texts = (xs: Array<{ text: string }>) => xs.map((x) => x.text);
  const counts = new Map<string, Counts>();
  for (const d of SECRET_DETECTORS) {
    const c = { inContext: await count(d, texts(g.inContext)), values: await count(d, texts(g.values)), negatives: await count(d, texts(negatives)) };
    counts.set(d.name, c);
    const removed = d.removes ? g.inContext.filter((s) => d.removes!(s.text, s.value)).length : undefined;
    rows.push({
      detector: d.name,
      'gitleaks in context flagged (≥98%)': pct(c.inContext, g.inContext.length),
      'value removed': removed === undefined ? '—' : pct(removed, g.inContext.length),
      'values alone (≥ gitleaks)': pct(c.values, g.values.length),
      "gitleaks' negatives flagged (≤5%)": pct(c.negatives, negatives.length),
      'detect-secrets secrets': pct(await count(d, texts(dsSecrets)), dsSecrets.length),
      'detect-secrets non-secrets flagged': pct(await count(d, texts(dsPlain)), dsPlain.length),
    });
  }
  printTable('Secrets on public samples (gitleaks rule samples, detect-secrets plugin tests)', rows);
  const [before, now, gitleaks] = SECRET_DETECTORS.slice(0, 3).map((d) => counts.get(d.name)!) as [Counts, Counts, Counts];
  const three = (c: Counts) => `${share(c.inContext, g.inContext.length)} / ${share(c.values, g.values.length)} / ${share(c.negatives, negatives.length)}`;
  return [
    {
      measure: "gitleaks' samples in assignment context redacted / values alone / gitleaks' negatives flagged",
      result: `${three(now)} (before: ${three(before)}; gitleaks' rules ${three(gitleaks)})`,
      goal: `≥ ${IN_CONTEXT_GOAL * 100}%, ≥ gitleaks, ≤ ${NEGATIVES_GOAL * 100}%`,
      met: now.inContext >= IN_CONTEXT_GOAL * g.inContext.length && now.values >= gitleaks.values && now.negatives <= NEGATIVES_GOAL * negatives.length,
    },
  ];
}

/**
 * The secrets rule kind on gitleaks' samples as a commit sees them: one staged file per sample
 * (samples in context, gitleaks' negatives), judged once by checkStaged — the pre-commit's
 * judgement — beside gitleaks' rules on the same texts.
 */
async function commitTable(): Promise<Goal[]> {
  const g = gitleaksCorpus();
  const negatives = g.falsePositives.filter((s) => findWithRules(s.text).length === 0);
  const dir = mkdtempSync(join(tmpdir(), 'hd-bench-secrets-'));
  try {
    const env = {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'b',
      GIT_AUTHOR_EMAIL: 'b@e',
      GIT_COMMITTER_NAME: 'b',
      GIT_COMMITTER_EMAIL: 'b@e',
    };
    const git = (...a: string[]) => execFileSync('git', a, { cwd: dir, env, stdio: 'ignore' });
    git('init', '-q', '-b', 'main');
    git('commit', '-q', '--allow-empty', '-m', 'empty');
    const files = (kind: string, xs: Array<{ text: string }>) =>
      xs.map((x, i) => {
        const rel = `${kind}/${Math.floor(i / 500)}/sample-${i}.txt`;
        mkdirSync(join(dir, kind, String(Math.floor(i / 500))), { recursive: true });
        writeFileSync(join(dir, rel), x.text.endsWith('\n') ? x.text : `${x.text}\n`);
        return rel;
      });
    const positives = files('in-context', g.inContext);
    const negs = files('negatives', negatives);
    git('add', '-A');
    const config = configSchema().parse({ rules: [{ secrets: true }] });
    const t0 = process.hrtime.bigint();
    const r = await checkStaged(dir, config);
    const judgedMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const refused = new Set(r.violations.map((v) => v.file));
    const pos = positives.filter((f) => refused.has(f)).length;
    const neg = negs.filter((f) => refused.has(f)).length;
    const gitleaksPos = g.inContext.filter((s) => findWithRules(s.text).length > 0).length;
    printTable(
      `The secrets rule on commits: gitleaks' samples, one staged file each (${positives.length + negs.length} files), judged by checkStaged as pre-commit judges them`,
      [
        {
          judge: 'secrets rule (checkStaged)',
          'samples in context refused (≥98%)': pct(pos, positives.length),
          "gitleaks' negatives refused (≤2%)": pct(neg, negs.length),
          'one judgement of every file': `${(judgedMs / 1000).toFixed(1)} s`,
        },
        {
          judge: `gitleaks ${GITLEAKS_VERSION} rules on the texts`,
          'samples in context refused (≥98%)': pct(gitleaksPos, g.inContext.length),
          "gitleaks' negatives refused (≤2%)": pct(0, negs.length),
          'one judgement of every file': '—',
        },
      ],
    );
    return [
      {
        measure: "secrets rule on commits: gitleaks' samples in context refused / gitleaks' negatives refused (one staged file each)",
        result: `${share(pos, positives.length)} / ${share(neg, negs.length)}`,
        goal: `≥ ${IN_CONTEXT_GOAL * 100}%, ≤ ${COMMIT_NEGATIVES_GOAL * 100}%`,
        met: pos >= IN_CONTEXT_GOAL * positives.length && neg <= COMMIT_NEGATIVES_GOAL * negs.length,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type ThreatDetector = { name: string; flags: (text: string) => boolean; skill?: (text: string) => boolean };

function threatDetectors(): ThreatDetector[] {
  const now = (scope: ThreatScope): ThreatDetector => ({ name: `hermesd now, ${scope}`, flags: (t) => scanText(t, scope).length > 0 });
  const before = (scope: 'context' | 'memory' | 'skill'): ThreatDetector => ({
    name: `hermesd before, ${scope}`,
    flags: (t) => scanBefore.scanText(t, scope).length > 0,
  });
  return [
    before('context'),
    now('context'),
    { name: 'reference (Hermes Agent) context patterns', flags: (t) => referenceHits(CONTEXT, t).length > 0 },
    before('memory'),
    now('memory'),
    { name: 'reference memory patterns', flags: (t) => referenceHits(MEMORY, t).length > 0 },
    { ...before('skill'), skill: (t) => scanBefore.scanText(t, 'skill').length > 0 },
    { ...now('skill'), skill: (t) => scanSkillText(t, 'SKILL.md').some((f) => f.severity === 'dangerous') },
    { name: 'reference skills_guard patterns', flags: (t) => referenceHits(SKILL, t).length > 0 },
  ];
}

function threatTable(): Goal[] {
  const attacks = overridePhrasings().filter((s) => PATTERNS_GROWN_ON[s.set] === 'first');
  const sets = [...new Set(attacks.map((s) => s.set))];
  const paragraphs = benignParagraphs();
  const documents = benignDocuments();
  const prompts = benignPrompts();
  const skills = realSkills();
  const sentences = benignSentences();
  const guide = benignGuideSentences();
  const rows = threatDetectors().map((d) => {
    const row: Record<string, string> = { detector: d.name };
    for (const set of sets) {
      const xs = attacks.filter((s) => s.set === set);
      row[set] = pct(xs.filter((s) => d.flags(s.text)).length, xs.length);
    }
    row['all override phrasings (≥90%)'] = pct(attacks.filter((s) => d.flags(s.text)).length, attacks.length);
    row['benign paragraphs flagged (0)'] = pct(paragraphs.filter((p) => d.flags(p.text)).length, paragraphs.length);
    row['whole documents flagged (0)'] = pct(documents.filter((p) => d.flags(p.text)).length, documents.length);
    row['benign prompts flagged'] = pct(prompts.filter((p) => d.flags(p.text)).length, prompts.length);
    row['real SKILL.md refused (0)'] = pct(skills.filter((s) => (d.skill ?? d.flags)(s.text)).length, skills.length);
    row['developer sentences about prompts flagged (held out)'] = pct(sentences.filter((p) => d.flags(p.text)).length, sentences.length);
    row['sentences of a guide to writing prompts flagged (held out)'] = pct(guide.filter((p) => d.flags(p.text)).length, guide.length);
    return row;
  });
  printTable('Threat scan on the override sets its patterns were grown on, and real developer text', rows);
  const before = threatDetectors()[0]!;
  const now = threatDetectors()[1]!;
  const caught = (d: ThreatDetector) => attacks.filter((s) => d.flags(s.text)).length;
  const benign = paragraphs.filter((p) => now.flags(p.text)).length;
  const sentenceHits = sentences.filter((p) => now.flags(p.text));
  const byModel = sentenceHits.filter((p) => scanText(p.text, 'context').some((h) => h.id === INJECTION_MODEL_ID)).length;
  const guideHits = guide.filter((p) => now.flags(p.text));
  const guideByModel = guideHits.filter((p) => scanText(p.text, 'context').some((h) => h.id === INJECTION_MODEL_ID)).length;
  const skillScan = threatDetectors().find((d) => d.name === 'hermesd now, skill')!;
  const refused = skills.filter((s) => skillScan.skill!(s.text)).length;
  return [
    {
      measure: `direct override phrasings flagged, in corpus (${sets.join(', ')}: issue 13 grew the patterns on them) / real developer paragraphs and skills flagged`,
      result: `${share(caught(now), attacks.length)} (before ${share(caught(before), attacks.length)}) / ${benign} of ${paragraphs.length.toLocaleString('en')} and ${refused} of ${skills.length}`,
      goal: `≥ ${OVERRIDES_GOAL * 100}%, 0`,
      met: caught(now) >= OVERRIDES_GOAL * attacks.length && benign === 0 && refused === 0,
    },
    {
      measure: `short developer sentences about prompts, instructions and agents flagged (${sentences.length.toLocaleString('en')}, held out: gemini-cli's and the MCP Python SDK's docs), by the scan / by the injection model`,
      result: `${sentenceHits.length} / ${byModel}`,
      goal: 'reported',
    },
    {
      measure: `sentences of a guide to writing prompts flagged (${guide.length.toLocaleString('en')}, held out: dair-ai's Prompt Engineering Guide, less its pages about attacks), by the scan / by the injection model`,
      result: `${guideHits.length} / ${guideByModel}`,
      goal: 'reported',
    },
  ];
}

/**
 * Each injection source on its own. The hand-written patterns are as they are: grown on some
 * sources (in corpus), never changed while looking at the others (held out). The model is
 * measured leave-one-source-out: for each direct source, trained on every other source less the
 * near-duplicates of its prompts, and the benign training texts (threshold chosen on those),
 * measured on the one left out (jailbreak_llms' two halves are one source); a column gives the
 * figure with the near-duplicates kept in training, labelled as such. "Shipped" is the scan as it
 * ships: the patterns OR the model trained on every source (in corpus for all of them).
 */
function heldOutTable(): Goal[] {
  const shipped = (t: string) => scanText(t, 'context').length > 0;
  const before = (t: string) => scanBefore.scanText(t, 'context').length > 0;
  const t0 = process.hrtime.bigint();
  const loso = leaveOneSourceOut();
  const trainSeconds = Number(process.hrtime.bigint() - t0) / 1e9 / loso.size;
  const leaky = leaveOneSourceOut('kept');
  const rows: Array<Record<string, string>> = [];
  const figures = (kind: string, groups: ReturnType<typeof bySource<{ set: string; text: string }>>, direct: boolean) =>
    groups.map((g) => {
      const n = g.samples.length;
      const model = loso.get(looSource(g.source));
      const withCopies = leaky.get(looSource(g.source));
      const pat = g.samples.map((s) => patternsFlag(s.text));
      const alone = model ? g.samples.map((s) => modelFlags(model, s.text)) : undefined;
      const hit = alone ? pat.filter((p, i) => p || alone[i]).length : pat.filter(Boolean).length;
      rows.push({
        kind,
        source: g.source,
        samples: String(n),
        patterns: `${pct(pat.filter(Boolean).length, n)} ${g.heldOut ? 'held out' : 'in corpus'}`,
        'model left out (LOSO)': alone ? pct(alone.filter(Boolean).length, n) : '—',
        'patterns OR model left out (≥90%)': direct ? pct(hit, n) : '—',
        'same, near-duplicates kept in training (leaky)':
          direct && withCopies ? pct(g.samples.filter((s, i) => pat[i] || modelFlags(withCopies, s.text)).length, n) : '—',
        'shipped (model as trained: every source but MODEL_NEVER_TRAINS_ON)': pct(g.samples.filter((s) => shipped(s.text)).length, n),
        'before issue 13': pct(g.samples.filter((s) => before(s.text)).length, n),
      });
      return { ...g, hit };
    });
  const phrasings = overridePhrasings();
  const direct = figures('direct override', bySource(phrasings), true);
  const odd = HALVED_SOURCES.flatMap((source) =>
    withoutNearDuplicates(
      phrasings.filter((s) => s.set === `${source}/odd`),
      phrasings.filter((s) => s.set === `${source}/even`),
    ),
  );
  figures('direct override, no near-duplicate in the half read', bySource(odd), true);
  const indirect = indirectInstructions();
  for (const kind of ['document', 'mail', 'table', 'code'] as const) {
    const xs = indirect.filter((s) => s.kind === kind);
    const set = [...new Set(xs.map((s) => s.set))].join(', ');
    figures(`indirect, ${kind}`, bySource(xs.map((s) => ({ ...s, set }))), false);
  }
  const heldBenign = benignTraining().filter((s) => s.split === 'held-out');
  rows.push({
    kind: 'benign, never trained on',
    source: 'injection-benign-train.json held-out fifth (role-play prompts, project docs, agent definitions)',
    samples: String(heldBenign.length),
    patterns: pct(heldBenign.filter((s) => patternsFlag(s.text)).length, heldBenign.length),
    'model left out (LOSO)': '—',
    'patterns OR model left out (≥90%)': '—',
    'same, near-duplicates kept in training (leaky)': '—',
    'shipped (model as trained: every source but MODEL_NEVER_TRAINS_ON)': pct(heldBenign.filter((s) => shipped(s.text)).length, heldBenign.length),
    'before issue 13': pct(heldBenign.filter((s) => before(s.text)).length, heldBenign.length),
  });
  printTable(
    `Threat scan (context scope) by injection source: patterns as grown, and the model leave-one-source-out, trained without the near-duplicates of the source's prompts (${trainSeconds.toFixed(1)} s per training)`,
    rows,
  );
  // A source split in halves counts once, by the half never read (heldOutSamples): both halves
  // share the model left out, and the half read is in corpus for the patterns.
  const bySrc = new Map<string, { hit: number; n: number }>();
  for (const g of direct) {
    const k = looSource(g.source);
    if (!heldOutSamples(g.samples, k).length) continue;
    const c = bySrc.get(k) ?? { hit: 0, n: 0 };
    bySrc.set(k, { hit: c.hit + g.hit, n: c.n + g.samples.length });
  }
  const sources = [...bySrc];
  const worst = sources.reduce((a, b) => (b[1].hit / b[1].n < a[1].hit / a[1].n ? b : a));
  const hitAll = sources.reduce((n, [, c]) => n + c.hit, 0);
  const nAll = sources.reduce((n, [, c]) => n + c.n, 0);
  const indirectHit = indirect.filter((s) => shipped(s.text)).length;
  return [
    {
      measure: `direct override phrasings flagged, leave-one-source-out (patterns as grown OR the model trained without the source and the near-duplicates of its prompts; of a source split in halves, the half never read): each of ${sources.map(([k]) => k).join(', ')} (the lowest) / all of them`,
      result: `${share(worst[1].hit, worst[1].n)} (${worst[0]}) / ${share(hitAll, nAll)} (${hitAll}/${nAll})`,
      goal: `≥ ${OVERRIDES_GOAL * 100}% on every source`,
      met: sources.every(([, c]) => c.hit >= OVERRIDES_GOAL * c.n),
    },
    {
      measure: `instructions hidden in documents, mails, tables and code flagged, held out (${[...new Set(indirect.map((s) => s.set))].join(', ')}; the model never trained on any)`,
      result: `${share(indirectHit, indirect.length)} (${indirectHit}/${indirect.length})`,
      goal: 'reported',
    },
  ];
}

/** About 1 MB of tool-output-like text: this repository's sources and docs, then dependency sources. */
function toolOutputMegabyte(): string[] {
  const root = join(fixturesDir(), '..', '..');
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (name === 'fixtures' || name === 'gitleaks-rules.ts') continue;
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|js|md|json|ya?ml)$/.test(name)) files.push(p);
    }
  };
  for (const d of ['src', 'test', 'docs', 'node_modules/zod', 'node_modules/commander', 'node_modules/yaml']) walk(join(root, d));
  let text = '';
  for (const f of files) {
    text += readFileSync(f, 'utf8') + '\n';
    if (text.length >= 1_000_000) break;
  }
  // Tool results arrive as messages of a few kilobytes.
  return text.slice(0, 1_000_000).match(/[\s\S]{1,4000}/g)!;
}

/** Source files of installed dependencies (pinned by the lockfile) and this repository: ordinary code and docs. */
function ordinaryCode(): Array<{ file: string; text: string }> {
  const root = join(fixturesDir(), '..', '..');
  const out: Array<{ file: string; text: string }> = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (name === 'fixtures' || name === 'gitleaks-rules.ts' || name === 'baseline') continue;
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|js|mjs|md|json|ya?ml)$/.test(name)) out.push({ file: p.slice(root.length + 1), text: readFileSync(p, 'utf8') });
    }
  };
  for (const d of [
    'src',
    'docs',
    'node_modules/zod',
    'node_modules/commander',
    'node_modules/yaml',
    'node_modules/openai',
    'node_modules/@types/node',
    'node_modules/vitest',
    'node_modules/vite',
  ])
    walk(join(root, d));
  return out;
}

function ordinaryCodeTable(): void {
  const files = ordinaryCode();
  const mb = files.reduce((n, f) => n + f.text.length, 0) / 1e6;
  const rows = [
    { detector: 'hermesd before (bench/baseline)', n: files.reduce((n, f) => n + secretsBefore.redactSecrets(f.text).redactions.length, 0) },
    { detector: 'hermesd now', n: files.reduce((n, f) => n + redactSecrets(f.text).redactions.length, 0) },
    { detector: `gitleaks ${GITLEAKS_VERSION} rules`, n: files.reduce((n, f) => n + findWithRules(f.text).length, 0) },
  ].map((r) => ({ detector: r.detector, redactions: r.n, 'per MB': (r.n / mb).toFixed(2) }));
  printTable(
    `Redactions in ordinary code and docs (${mb.toFixed(1)} MB: dependency sources pinned by the lockfile, this repository's src/ and docs/; mostly false positives, a few test fixtures of those packages)`,
    rows,
  );
}

function costTable(): Goal[] {
  const chunks = toolOutputMegabyte();
  const ROUNDS = 15;
  const paths = [
    { name: 'every tool result: redactSecrets', before: (c: string) => secretsBefore.redactSecrets(c), now: (c: string) => redactSecrets(c) },
    {
      name: 'every SessionDB write: pre-test, then redaction',
      before: (c: string) => secretsBefore.redactForStorage(c),
      now: (c: string) => redactForStorage(c),
    },
    // No goal: a context file is scanned once per change, not per message.
    { name: 'threat scan, context scope', before: (c: string) => scanBefore.scanText(c, 'context'), now: (c: string) => scanText(c, 'context'), noGoal: true },
  ];
  const rows = [];
  const figures: Array<{ before: number; now: number; ratio: number }> = [];
  for (const p of paths) {
    const before: number[] = [];
    const now: number[] = [];
    const ratios: number[] = [];
    for (let r = 0; r < ROUNDS + 2; r++) {
      let t = process.hrtime.bigint();
      for (const c of chunks) p.before(c);
      const b = Number(process.hrtime.bigint() - t) / 1e6;
      t = process.hrtime.bigint();
      for (const c of chunks) p.now(c);
      const n = Number(process.hrtime.bigint() - t) / 1e6;
      if (r < 2) continue; // warm-up
      before.push(b);
      now.push(n);
      ratios.push(n / b);
    }
    if (!p.noGoal) figures.push({ before: median(before), now: median(now), ratio: median(ratios) });
    rows.push({
      path: p.name,
      'before (ms/MB)': median(before).toFixed(1),
      'now (ms/MB)': median(now).toFixed(1),
      'ratio (median of rounds)': `${median(ratios).toFixed(2)}×`,
      goal: p.noGoal ? '—' : `≤ ${COST_RATIO_GOAL}×`,
    });
  }
  printTable(
    `Redaction and scan cost per MB of tool output (${chunks.length} messages of ≤4 KB: sources and docs), medians of ${ROUNDS} interleaved rounds`,
    rows,
  );
  const both = (f: (x: { before: number; now: number; ratio: number }) => string) => figures.map(f).join(' / ');
  return [
    {
      measure: 'redaction per MB of tool output: every tool result / every SessionDB write, vs before',
      result: `${both((x) => x.now.toFixed(1))} ms (before ${both((x) => x.before.toFixed(1))} ms): ${both((x) => `${x.ratio.toFixed(2)}×`)}`,
      goal: `≤ ${COST_RATIO_GOAL}×`,
      met: figures.every((x) => x.ratio <= COST_RATIO_GOAL),
    },
  ];
}

export const bench: Bench = {
  name: 'detectors',
  run: async () => {
    const goals = await secretTable();
    goals.push(...(await commitTable()));
    ordinaryCodeTable();
    goals.push(...threatTable());
    goals.push(...heldOutTable());
    goals.push(...costTable());
    return goals;
  },
};
