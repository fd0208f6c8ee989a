/**
 * The injection model: logistic regression on hashed words, word pairs and character 5-grams, trained offline
 * (bench/injection-train.ts, `node scripts/train-injection-model.mjs`) on public override and
 * jailbreak prompts against public benign prompts and docs, and shipped as int8 weights
 * (injection-weights.ts). The threat scan flags a text when a pattern matches OR the model's
 * score of one of its windows is above the threshold chosen on the training data.
 *
 * A text is scored window by window (paragraphs joined up to WINDOW characters), so a long
 * document is judged part by part, as the prompts it was trained on are about that long.
 * Features of a window: each distinct lowercased word, word pair and character 5-gram, hashed
 * (FNV-1a) into DIM buckets, each worth 1/√n (n the window's distinct features, at least
 * MIN_FEATURES), so length does not count.
 */

export const DIM = 1 << 16;
/** Characters per window: about the length of the longer prompts the model was trained on. */
const WINDOW = 4000;

export type InjectionModel = {
  /** One weight per bucket. */
  weights: ArrayLike<number>;
  bias: number;
  /** A window whose score (logit) exceeds this is flagged. */
  threshold: number;
};

/** A short text is scored as if it had this many features: a few words are too little to judge by. */
export const MIN_FEATURES = 30;
/** Character n-grams of the words joined by single spaces: they carry spelling variants and word parts. */
const CHARS = 5;

const WORD = /[a-z0-9]+(?:'[a-z]+)?/g;

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Marks of the buckets already seen in featureBuckets (cleared before it returns). */
const seen = new Uint8Array(DIM);

/** The distinct buckets of a text's words, word pairs and character 5-grams (unsorted). */
export function featureBuckets(text: string): number[] {
  const words = text.toLowerCase().match(WORD) ?? [];
  const out: number[] = [];
  const add = (h: number) => {
    const i = h % DIM;
    if (!seen[i]) {
      seen[i] = 1;
      out.push(i);
    }
  };
  let prev = '';
  for (const w of words) {
    add(fnv1a(w));
    if (prev) add(fnv1a(`${prev} ${w}`));
    prev = w;
  }
  // Character 5-grams of " word word … ", hashed in place (no substring is made).
  const t = ` ${words.join(' ')} `;
  for (let i = 0; i + CHARS <= t.length; i++) {
    let h = 0x811c9dc5 ^ 0x23; // '#': apart from the word features
    h = Math.imul(h, 0x01000193);
    for (let k = i; k < i + CHARS; k++) h = Math.imul(h ^ t.charCodeAt(k), 0x01000193);
    add(h >>> 0);
  }
  for (const i of out) seen[i] = 0;
  return out;
}

/** The model's score (logit) of one window. */
export function scoreWindow(model: InjectionModel, text: string): number {
  const b = featureBuckets(text);
  if (b.length === 0) return -Infinity;
  let s = 0;
  for (const i of b) s += model.weights[i]!;
  return model.bias + s / Math.sqrt(Math.max(b.length, MIN_FEATURES));
}

/** The text cut into windows: paragraphs (at blank lines) joined up to WINDOW characters, longer ones cut. */
export function windows(text: string): Array<{ index: number; text: string }> {
  const out: Array<{ index: number; text: string }> = [];
  let start = 0;
  let end = 0;
  const push = (from: number, to: number) => {
    for (let i = from; i < to; i += WINDOW) out.push({ index: i, text: text.slice(i, Math.min(to, i + WINDOW)) });
  };
  for (const m of text.matchAll(/\n[ \t]*\n/g)) {
    const next = m.index! + m[0].length;
    if (m.index! - start > WINDOW && end > start) {
      push(start, end);
      start = end;
    }
    end = next;
  }
  if (text.length - start > WINDOW && end > start) {
    push(start, end);
    start = end;
  }
  push(start, text.length);
  return out;
}

/** The highest-scoring window of a text, and its score. */
export function scoreText(model: InjectionModel, text: string): { score: number; index: number; text: string } {
  let best = { score: -Infinity, index: 0, text: '' };
  for (const w of windows(text)) {
    const score = scoreWindow(model, w.text);
    if (score > best.score) best = { score, ...w };
  }
  return best;
}

/** Where in a flagged window the model reads the attack: its highest-scoring sentence. */
export function strongestSentence(model: InjectionModel, window: string): { index: number; length: number } {
  let best = { score: -Infinity, index: 0, length: Math.min(window.length, 120) };
  for (const m of window.matchAll(/[^.!?\n]+[.!?]?/g)) {
    const score = scoreWindow(model, m[0]);
    if (score > best.score) best = { score, index: m.index!, length: m[0].length };
  }
  return best;
}

/** Weights stored as base64 int8, one per bucket, times `scale`. */
export function decodeModel(stored: { weights: string; scale: number; bias: number; threshold: number }): InjectionModel {
  const bytes = Buffer.from(stored.weights, 'base64');
  const weights = new Float32Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) weights[i] = ((bytes[i]! << 24) >> 24) * stored.scale;
  return { weights, bias: stored.bias, threshold: stored.threshold };
}
