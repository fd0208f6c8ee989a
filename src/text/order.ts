/**
 * The one order of names and keys hermesd sorts by: UTF-16 code units, as `Array.prototype.sort`
 * orders strings and as Python's `sorted` orders the same names (ISO times, skill names and
 * categories, relative paths). Not `localeCompare`: its first call in a process loads ICU's
 * collation data (what that costs: docs/benchmarks.md#daemon), and its order depends on the
 * collation of the build.
 */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
