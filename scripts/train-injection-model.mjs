#!/usr/bin/env node
/**
 * Trains the threat scan's injection model and writes its weights into
 * src/security/injection-weights.ts (bench/injection-train.ts says how; fixed seed, so the same
 * fixtures give the same file):
 *
 *   npm run build && node scripts/train-injection-model.mjs
 *
 * Positives: every direct override source of test/fixtures/injection-direct.json but the ones
 * bench/detector-corpus.ts keeps out of training (MODEL_NEVER_TRAINS_ON). Negatives: the
 * `train` part of test/fixtures/injection-benign-train.json. No set a false-flag figure is
 * measured on (developer paragraphs, documents, benign prompts, SKILL.md files) is trained on.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { weightsModule } from '../dist/bench/injection-train.js';

const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'security', 'injection-weights.ts');
writeFileSync(out, weightsModule());
process.stdout.write(`wrote ${out}\n`);
