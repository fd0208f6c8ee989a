/**
 * A block hermesd marks in a file of the user's (a hook file, a TOML config): where it is, from
 * its first marker to the end of its last marker's line, so that it can be taken out again
 * after the user edited inside it.
 */
export function markedSpan(text: string, begin: string, end: string): { from: number; to: number } | undefined {
  const from = text.indexOf(begin);
  if (from < 0) return undefined;
  const endAt = text.indexOf(end, from);
  if (endAt < 0) return undefined;
  let to = endAt + end.length;
  if (text[to] === '\r') to++;
  if (text[to] === '\n') to++;
  return { from, to };
}
