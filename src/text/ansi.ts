/**
 * Terminal escape sequences in stored text (colours from a test runner, cursor moves from a
 * progress bar) are noise to a model and can hide or rewrite what a person sees when the
 * text is printed again. Output that leaves the session store is stripped of them.
 */

// CSI (ESC [ … final byte, or the 8-bit CSI), OSC (ESC ] … BEL or ST), and two-byte ESC sequences.
const ANSI = /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

export function stripAnsi(text: string): string {
  return text.includes('\u001b') || text.includes('\u009b') ? text.replace(ANSI, '') : text;
}
