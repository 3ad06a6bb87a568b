// Reading the docs the way the docs tests check them: a page of docs/ (or
// the README), the text after a heading, and the fenced block after a marker.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export const ROOT = join(__dirname, '..')

/** docs/NAME, or the README for 'README.md' at the root. */
export function readDoc(name: string): string {
  return readFileSync(join(ROOT, name === 'README.md' ? name : join('docs', name)), 'utf8')
}

/** The text from `heading` (a line, e.g. '# Tables: frames') to the end; throws naming the page when it is missing. */
export function section(page: string, heading: string): string {
  const text = readDoc(page)
  const at = text.split('\n').findIndex((l) => l === heading)
  if (at < 0) throw new Error(`${page} has no heading ${JSON.stringify(heading)}`)
  return text.split('\n').slice(at).join('\n')
}

/** The body of the first fenced block after `marker` (an `<!-- name -->` comment or any text) in `text`. */
export function fencedBlock(text: string, marker: string): string {
  const at = text.indexOf(marker)
  if (at < 0) throw new Error(`no ${JSON.stringify(marker)} in the page`)
  const m = /```[^\n]*\n([\s\S]*?)\n```/.exec(text.slice(at))
  if (!m) throw new Error(`no fenced block after ${JSON.stringify(marker)}`)
  return m[1]
}
