// A JS RegExp as the core's regex engine (Rust's regex crate) reads it.
// Where the two agree the pattern passes as it is; JS's ASCII classes (\d,
// \w, \s, \b) are spelled out so they keep their JS meaning; what the
// engine cannot do (lookaround, backreferences, the sticky flag, capturing
// groups in a split) is refused here, naming the feature, rather than
// matching something else on the workers.

import { SpillwayError } from '../base/errors'

const WORD = '0-9A-Za-z_'
const SPACE = '\\t\\n\\x0B\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}'
const CLASS_ESCAPES: Record<string, string> = { d: '0-9', w: WORD, s: SPACE }
const OUTSIDE: Record<string, string> = { d: '[0-9]', D: '[^0-9]', w: `[${WORD}]`, W: `[^${WORD}]`, s: `[${SPACE}]`, S: `[^${SPACE}]`, b: '(?-u:\\b)', B: '(?-u:\\B)' }

function refuse(re: RegExp, feature: string, what: string): SpillwayError {
  return new SpillwayError('ERR_SPILLWAY_UNSUPPORTED_REGEX', `${what}: ${re} uses ${feature}, which the frame kernels' regex engine (Rust's regex crate, linear time) does not have; rewrite the pattern without it, or filter with mapBatches`, { pattern: re.source, feature })
}

/** `re` in the regex crate's syntax; `split` also refuses capturing groups (JS would splice their matches in). */
export function translateRegExp(re: RegExp, what: string, split = false): string {
  const src = re.source
  let out = ''
  let inClass = false
  for (let i = 0; i < src.length; i++) {
    const c = src[i]
    if (c === '\\') {
      const n = src[i + 1] ?? ''
      i++
      if (/[1-9]/.test(n) || (n === 'k' && src[i + 1] === '<')) throw refuse(re, `a backreference (\\${n}…)`, what)
      if (n === 'c') throw refuse(re, 'a control escape (\\cX)', what)
      if (n === 'u' && src[i + 1] === '{') {
        const end = src.indexOf('}', i)
        out += `\\x{${src.slice(i + 2, end)}}`
        i = end
      } else if (n === 'u' && /^[0-9a-fA-F]{4}$/.test(src.slice(i + 1, i + 5))) {
        out += `\\x{${src.slice(i + 1, i + 5)}}`
        i += 4
      } else if (inClass && CLASS_ESCAPES[n]) out += CLASS_ESCAPES[n]
      else if (inClass && /[DWSB]/.test(n)) throw refuse(re, `\\${n} inside a character class`, what)
      else if (!inClass && OUTSIDE[n]) out += OUTSIDE[n]
      else if (n === '/') out += '/'
      else if (n === '0') out += '\\x00'
      else out += `\\${n}`
      continue
    }
    if (inClass) {
      if (c === ']') inClass = false
      // The regex crate reads these as nested classes and set operations.
      out += c === '[' || c === '&' || c === '~' || (c === '-' && src[i + 1] === '-') ? `\\${c}` : c
      continue
    }
    if (c === '[') {
      inClass = true
      if (src.startsWith('[^]', i)) {
        out += '(?s:.)'
        i += 2
        inClass = false
        continue
      }
      out += c
      if (src[i + 1] === ']') throw refuse(re, 'an empty class []', what)
      continue
    }
    if (c === '(' && src[i + 1] === '?') {
      const kind = src.slice(i + 2, i + 4)
      if (kind.startsWith('=') || kind.startsWith('!') || kind === '<=' || kind === '<!') throw refuse(re, `a lookaround (${src.slice(i, i + 4)}…)`, what)
      if (kind.startsWith('<') && split) throw refuse(re, 'a capturing group in split (JS would put its matches among the pieces)', what)
    } else if (c === '(' && split) throw refuse(re, 'a capturing group in split (JS would put its matches among the pieces); use (?:…)', what)
    out += c
  }
  for (const f of re.flags) {
    if (f === 'y') throw refuse(re, 'the sticky flag y', what)
    if (f === 'v') throw refuse(re, 'the v flag (set notation)', what)
  }
  const inline = [...re.flags].filter((f) => 'ims'.includes(f)).join('')
  return inline ? `(?${inline})${out}` : out
}
