#!/usr/bin/env node
/**
 * Builds test/fixtures/benign-sentences.json: short developer sentences about prompts,
 * instructions, models and agents, where the injection scan's false flags are measured (no
 * detector trains on them: scripts/injection-benign.mjs leaves out their near-duplicates).
 *
 *   npm run build && node scripts/benign-sentences.mjs <mirror dir>
 *
 * <mirror dir> holds git directories `<owner>+<name>/repo` (read with `git show`, nothing is run):
 * the Markdown docs of google-gemini/gemini-cli (Apache-2.0) and modelcontextprotocol/python-sdk
 * (MIT) at the commits below, split into sentences (bench/detector-corpus.ts sentencesOf): every
 * sentence that names a prompt, instructions, the system, a model, an agent or context, up to 600
 * per project taken evenly, and 150 others per project; English pages only. Nothing is filtered
 * by any detector.
 *
 *   node scripts/benign-sentences.mjs <mirror dir> guide
 *
 * builds test/fixtures/benign-guide-sentences.json the same way from dair-ai/Prompt-Engineering-Guide
 * (MIT): a guide to writing prompts, the developer prose most about prompts there is. Its English
 * pages (`*.en.mdx`, `guides/*.md`) less the ones about attacking models (adversarial prompting,
 * jailbreaks, injection, leaking, the risks section: they quote attacks, which a scan should flag),
 * chosen by their path, not by any detector.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sentencesOf, TRANSLATED_PAGE } from '../dist/bench/detector-corpus.js';

const mirrors = process.argv[2];
if (!mirrors) {
  process.stderr.write('usage: node scripts/benign-sentences.mjs <mirror dir> [guide]\n');
  process.exit(2);
}
const guide = process.argv[3] === 'guide';
const SENTENCE_SOURCES = guide
  ? [
      {
        repo: 'dair-ai+Prompt-Engineering-Guide',
        commit: '3d96678',
        licence: 'MIT',
        pages: /(\.en\.mdx|^guides\/[^/]+\.md)$/,
        about: /risk|advers|jailbreak|inject|leak/i,
      },
    ]
  : [
      { repo: 'google-gemini+gemini-cli', commit: '5411f113ca', licence: 'Apache-2.0' },
      { repo: 'modelcontextprotocol+python-sdk', commit: '57394b054', licence: 'MIT' },
    ];
const ABOUT = /\b(prompts?|instructions?|system|models?|agents?|context|LLMs?)\b/i;
const git = (repo, ...args) => execFileSync('git', ['--git-dir', join(mirrors, repo, 'repo'), ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
const evenly = (xs, n) => (xs.length <= n ? xs : Array.from({ length: n }, (_, k) => xs[Math.floor((k * xs.length) / n)]));

const samples = [];
const sources = [];
for (const { repo, commit, licence, pages, about } of SENTENCE_SOURCES) {
  const full = git(repo, 'rev-parse', commit).trim();
  sources.push(`https://github.com/${repo.replace('+', '/')} @ ${full} (${licence}): *.md, by sentence`);
  const seen = new Set();
  const all = git(repo, 'ls-tree', '-r', '--name-only', full)
    .split('\n')
    .filter((f) => /\.mdx?$/i.test(f) && !/(^|\/)(CHANGELOG|LICENSE)/i.test(f) && !TRANSLATED_PAGE.test(f))
    .filter((f) => (!pages || pages.test(f)) && !about?.test(f))
    .sort()
    .flatMap((f) => sentencesOf(git(repo, 'show', `${full}:${f}`)).map((text, i) => ({ set: repo, id: `${f}#${i}`, text })))
    .filter((s) => !seen.has(s.text) && seen.add(s.text));
  samples.push(
    ...evenly(
      all.filter((s) => ABOUT.test(s.text)),
      600,
    ),
    ...evenly(
      all.filter((s) => !ABOUT.test(s.text)),
      150,
    ),
  );
}
const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', guide ? 'benign-guide-sentences.json' : 'benign-sentences.json');
writeFileSync(out, JSON.stringify({ source: sources, samples }, null, 0) + '\n');
process.stdout.write(`${samples.length} sentences -> ${out}\n`);
