/** POSIX sh quoting: every word hermesd writes into a script or a command line goes through here. */

/** `s` as one single-quoted sh word (a `'` inside becomes `'\''`). */
export const shQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** `s` bare where sh reads it as one word unchanged, else quoted (for command lines a person reads). */
export const shWord = (s: string): string => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : shQuote(s));
