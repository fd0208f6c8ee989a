/**
 * GitHub Actions annotations: workflow commands (`::error file=…,line=…::message`) that the
 * runner turns into annotations on the pull request's files and the run's summary. `hermesd
 * check` writes them when GITHUB_ACTIONS=true (GitHub's runners set it).
 */
import type { Finding } from './sarif.js';

/** A command's message: `%`, CR and LF escaped as the runner reads them. */
const escapeData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
/** A command's property value: the message's escapes, and `:` and `,` that end a property. */
const escapeProperty = (s: string) => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

/** One `::error` line per violation (at its file, and line when it has one) and one `::warning` per warning. */
export function githubAnnotations(result: { violations: readonly Finding[]; warnings: readonly string[] }): string[] {
  const lines = result.violations.map((v) => {
    const props = [`file=${escapeProperty(v.file)}`, ...(v.line > 0 ? [`line=${v.line}`] : []), `title=${escapeProperty(`hermesd: ${v.rule}`)}`];
    return `::error ${props.join(',')}::${escapeData(v.commit ? `${v.message} (commit ${v.commit.slice(0, 10)})` : v.message)}`;
  });
  for (const w of result.warnings) lines.push(`::warning title=hermesd::${escapeData(w)}`);
  return lines;
}

/** A `::notice` line: a sentence for the run's log and summary, at no file. */
export function githubNotice(text: string): string {
  return `::notice title=hermesd::${escapeData(text)}`;
}
