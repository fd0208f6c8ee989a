/** Types for scripts/go-regex.mjs (plain JavaScript, run by node without a build). */
export function translateGoRegex(go: string): { source: string; flags: string };
