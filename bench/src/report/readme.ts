import { readFileSync, writeFileSync } from 'node:fs';

const START = '<!-- bench:latest:start -->';
const END = '<!-- bench:latest:end -->';

/** Puts `summary` between the bench markers of `readme` (docs/performance.md); false when the markers are missing. */
export function updateReadme(readme: URL, summary: string): boolean {
  const text = readFileSync(readme, 'utf8');
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) return false;
  writeFileSync(readme, `${text.slice(0, start + START.length)}\n${summary}\n${text.slice(end)}`);
  return true;
}
