/**
 * The shape of secret-detection rule data (src/security/gitleaks-rules.ts, generated from
 * gitleaks' configuration by scripts/gitleaks-rules.mjs). Regexes are JavaScript sources
 * already translated from Go; `flags` is '' or 'i'.
 */
export type RegexData = { source: string; flags?: string };

export type AllowlistData = {
  description?: string;
  /** 'AND': every listed check must hold; default OR: a regex or a stopword is enough. */
  condition?: 'AND' | 'OR';
  /** What `regexes` are tested against: the secret (default), the whole match, or its line(s). */
  regexTarget?: 'match' | 'line';
  regexes?: RegexData[];
  /** File paths; text without a path never matches them. */
  paths?: RegexData[];
  /** Lower-case words: a secret containing one is not a secret. */
  stopwords?: string[];
};

export type SecretRuleData = {
  id: string;
  description: string;
  regex?: RegexData;
  /** Rules scoped to file paths only apply to files; redaction of text skips them. */
  path?: RegexData;
  /** Capture group holding the secret; default: the first non-empty group, else the match. */
  secretGroup?: number;
  /** The secret's Shannon entropy must be above this (bits/char). */
  entropy?: number;
  /** Lower-case literals, one of which every match contains: the cheap prefilter. */
  keywords: string[];
  allowlists?: AllowlistData[];
};
