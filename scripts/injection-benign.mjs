#!/usr/bin/env node
/**
 * Builds test/fixtures/injection-benign-train.json: benign text the injection model is trained on
 * (its negatives), from public sources that none of the false-flag figures is measured on (see
 * test/fixtures/README.md for sources, versions and licences).
 *
 *   npm run build && node scripts/injection-benign.mjs <mirror dir>
 *
 * <mirror dir> holds git directories `<owner>+<name>/repo` (read with `git show`, nothing is run):
 * - f/awesome-chatgpt-prompts (CC0) at the commit below, prompts.csv: role-play and task prompts
 *   ("I want you to act as a linux terminal…"), the hard negatives. Text prompts up to 3,000
 *   characters; the texts of any set a false flag is measured on (below) are left out.
 * - The Markdown and reStructuredText docs of expressjs/express, pallets/flask, pydantic/pydantic-ai,
 *   bufbuild/protobuf-es and grpc-ecosystem/grpc-gateway, and the agent, skill and command
 *   definitions of wshobson/agents (instructions to a coding agent), split into paragraphs (80
 *   characters or more; at most 700 per repository, 2,000 of wshobson/agents, taken evenly).
 * Texts the hand-written patterns flag are left out (quotes of attacks in docs, a few
 * community prompts that are jailbreaks): the model is not taught that an attack is benign.
 * Left out too: any near-duplicate of a text a false-flag figure is measured on (llm-guard's
 * benign prompts, the real SKILL.md files, the benign documents and their paragraphs).
 * Every fifth sample (by position) is `held-out`: the model never trains on it, the bench
 * reports the share it flags.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  benignDocuments,
  benignParagraphs,
  benignGuideSentences,
  benignPrompts,
  benignSentences,
  realSkills,
  sentencesOf,
  TRANSLATED_PAGE,
  withoutNearDuplicates,
} from '../dist/bench/detector-corpus.js';
import { scanText } from '../dist/src/security/scan.js';

const mirrors = process.argv[2];
if (!mirrors) {
  process.stderr.write('usage: node scripts/injection-benign.mjs <mirror dir>\n');
  process.exit(2);
}
const PROMPTS = { repo: 'f+awesome-chatgpt-prompts', commit: '246418367f3d80857def4696c14e635cc51c4a0c' };
const DOCS = [
  { repo: 'expressjs+express', commit: 'a3714473feb3d2908add734d340e7755fd85e0a3' },
  { repo: 'pallets+flask', commit: '2ac89889f4cc330eabd50f295dcef02828522c69' },
  { repo: 'pydantic+pydantic-ai', commit: '4fda38988f2939fa6ea9cdefcf120693e10ef491' },
  { repo: 'bufbuild+protobuf-es', commit: '04297e762a64dbcafc299c46785dbc5621b4329f' },
  { repo: 'grpc-ecosystem+grpc-gateway', commit: '9648db43c0246058bec6e832bd53adb0cdf4eead' },
  // Agent, skill and command definitions: instructions to a coding agent, as AGENTS.md and SKILL.md files are.
  { repo: 'wshobson+agents', commit: '367cb6a4a182cf7e9b0a17c9429f7411ddd9cf35', paragraphs: 2000 },
  // An agent SDK's docs: prose about prompts, instructions and models (only its sentences are taken).
  { repo: 'openai+openai-agents-python', commit: '7f7a44f8d', paragraphs: 0, sentences: 1500 },
];
/** Sentences per repository (short developer text: what a memory entry or a commit subject is), and commit subjects. */
const SENTENCES_PER_REPO = 300;
const SUBJECTS_PER_REPO = 250;
const HEADINGS_PER_REPO = 150;
/** Sentences that talk about prompts, models and agents: the hard negatives, taken first. */
const ABOUT = /\b(prompts?|instructions?|system|models?|agents?|context|LLMs?)\b/i;
const PER_REPO = 700;
const git = (repo, ...args) => execFileSync('git', ['--git-dir', join(mirrors, repo, 'repo'), ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });

/** RFC 4180 rows (quoted fields may hold commas, quotes and newlines). */
function csvRows(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') ((field += '"'), i++);
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') (row.push(field), (field = ''));
    else if (c === '\n') (row.push(field), rows.push(row), (row = []), (field = ''));
    else if (c !== '\r') field += c;
  }
  if (field || row.length) (row.push(field), rows.push(row));
  return rows;
}

// The hand-written patterns only: a text the model itself flags wrongly is the negative it must learn from.
const byPatterns = (t, scope) => scanText(t, scope).some((h) => h.id !== 'injection-model');
const flagged = (t) => byPatterns(t, 'context') || byPatterns(t, 'memory');
const evenly = (xs, n) => (xs.length <= n ? xs : Array.from({ length: n }, (_, k) => xs[Math.floor((k * xs.length) / n)]));
const samples = [];

const [header, ...rows] = csvRows(git(PROMPTS.repo, 'show', `${PROMPTS.commit}:prompts.csv`));
const col = (name) => header.indexOf(name);
const prompts = rows
  .filter((r) => r[col('type')] === 'TEXT' && r[col('prompt')].trim().length > 0 && r[col('prompt')].length <= 3000)
  .map((r) => ({ set: 'awesome-chatgpt-prompts', id: r[col('act')], text: r[col('prompt')].trim() }))
  .filter((s) => !flagged(s.text));
samples.push(...prompts);

for (const { repo, commit, paragraphs: n, sentences: m } of DOCS) {
  const files = git(repo, 'ls-tree', '-r', '--name-only', commit)
    .split('\n')
    .filter((f) => /\.(md|mdx|rst)$/i.test(f) && !TRANSLATED_PAGE.test(f))
    .sort();
  const texts = files.map((f) => ({ f, text: git(repo, 'show', `${commit}:${f}`) }));
  const all = texts.flatMap(({ f, text }) =>
    text
      .split(/\n\s*\n/)
      .map((t) => t.trim())
      .filter((t) => t.length >= 80 && !flagged(t))
      .map((text, i) => ({ set: `docs/${repo}`, id: `${f}#${i}`, text: text.slice(0, 4000) })),
  );
  const paragraphs = all;
  const step = Math.max(1, paragraphs.length / (n ?? PER_REPO));
  for (let k = 0; k < Math.min(n ?? PER_REPO, paragraphs.length); k++) samples.push(paragraphs[Math.floor(k * step)]);
  // Its sentences, the ones about prompts and models first (four in five), then the others.
  const seen = new Set();
  const sentences = texts
    .flatMap(({ f, text }) => sentencesOf(text).map((t, i) => ({ set: `sentences/${repo}`, id: `${f}#s${i}`, text: t })))
    .filter((x) => !seen.has(x.text) && seen.add(x.text) && !flagged(x.text));
  const quota = m ?? SENTENCES_PER_REPO;
  const about = evenly(
    sentences.filter((x) => ABOUT.test(x.text)),
    Math.round(quota * 0.8),
  );
  samples.push(
    ...about,
    ...evenly(
      sentences.filter((x) => !ABOUT.test(x.text)),
      quota - about.length,
    ),
  );
  // Its headings: a few words ("Before you begin"), the shortest text a file holds.
  const headings = [...new Set(texts.flatMap(({ text }) => [...text.matchAll(/^#{1,6}[ \t]+(.{8,120})$/gm)].map((h) => h[1].trim())))]
    .filter((t) => !flagged(t))
    .map((text, i) => ({ set: `headings/${repo}`, id: `h${i}`, text }));
  samples.push(...evenly(headings, HEADINGS_PER_REPO));
  // Its commit subjects: a developer's one-line notes.
  const subjects = [...new Set(git(repo, 'log', '--no-merges', '--format=%s', '-n', '5000', commit).split('\n'))]
    .filter((t) => t.length >= 15 && t.length <= 200 && !flagged(t))
    .map((text, i) => ({ set: `subjects/${repo}`, id: `log#${i}`, text }));
  samples.push(...evenly(subjects, SUBJECTS_PER_REPO));
}

// Nothing a false-flag figure is measured on: no near-duplicate (half or more of its 5-word
// shingles in one text) of a benign prompt, a real SKILL.md or a benign document, and no
// paragraph of those documents.
const measuredSentences = [...benignSentences(), ...benignGuideSentences()];
const measured = new Set([...benignParagraphs(), ...measuredSentences].map((p) => p.text.replace(/\s+/g, ' ').trim().toLowerCase()));
const kept = withoutNearDuplicates(
  withoutNearDuplicates(samples, [...benignPrompts(), ...realSkills(), ...benignDocuments()]),
  measuredSentences,
  // A measured sentence inside a training paragraph is a near-duplicate too.
  { eitherWay: true },
).filter((s) => !measured.has(s.text.replace(/\s+/g, ' ').trim().toLowerCase()));
samples.length = 0;
samples.push(...kept);

const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'injection-benign-train.json');
const source = {
  prompts: `https://github.com/f/awesome-chatgpt-prompts @ ${PROMPTS.commit} prompts.csv (CC0-1.0)`,
  docs: DOCS.map((d) => `https://github.com/${d.repo.replace('+', '/')} @ ${d.commit}`),
};
writeFileSync(out, JSON.stringify({ source, samples: samples.map((s, i) => ({ ...s, split: i % 5 === 4 ? 'held-out' : 'train' })) }, null, 0) + '\n');
process.stdout.write(`${samples.length} samples -> ${out}\n`);
