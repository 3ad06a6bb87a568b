// Module hooks (module.register) that load TypeScript task modules on a
// Node without type stripping of its own: the types are stripped by amaro,
// the library Node's own stripping is built on, in the same strip-only mode,
// so a module that loads here loads the same on a Node that strips by
// itself (and one that does not, with enums or namespaces, fails on both).
// Loaded in the hooks' own thread; it shares nothing with the worker.

import { existsSync, readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isTypeScriptModule } from './typescript'

type Format = 'module' | 'commonjs'
interface LoadContext {
  format?: string | null
}

/** `.mts` and `.cts` say; `.ts` follows the nearest package.json's "type", else its own syntax (as Node's detection does). */
function formatOf(file: string, code: string): Format {
  if (file.endsWith('.mts')) return 'module'
  if (file.endsWith('.cts')) return 'commonjs'
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json')
    if (existsSync(pkg)) {
      try {
        const type = JSON.parse(readFileSync(pkg, 'utf8')).type
        if (type === 'module' || type === 'commonjs') return type
      } catch {
        // An unreadable package.json says nothing: go on as Node would, by syntax.
      }
      break
    }
    if (dirname(dir) === dir) break
  }
  return /^\s*(import\s*[\w{*'"]|export\s)/m.test(code) ? 'module' : 'commonjs'
}

let strip: ((code: string, options: { mode: 'strip-only'; filename: string }) => { code: string }) | undefined

export async function load(url: string, context: LoadContext, next: (u: string, c: LoadContext) => Promise<unknown>): Promise<unknown> {
  // Whatever format resolve gave (none on Node 20, or a -typescript one with stripping off), these load here.
  if (!isTypeScriptModule(url)) return next(url, context)
  const file = fileURLToPath(url)
  strip ??= require('amaro').transformSync
  let code: string
  try {
    code = strip!(await readFile(file, 'utf8'), { mode: 'strip-only', filename: file }).code
  } catch (e: any) {
    // amaro's own error (code, line, snippet), told as Node tells its own.
    if (e?.code !== 'UnsupportedSyntax' && e?.code !== 'InvalidSyntax') throw e
    const err = new SyntaxError(`${e.message} (${file}:${e.startLine ?? '?'})${e.snippet ? `\n${e.snippet}` : ''}`)
    ;(err as { code?: string }).code = e.code === 'UnsupportedSyntax' ? 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX' : 'ERR_INVALID_TYPESCRIPT_SYNTAX'
    throw err
  }
  return { format: formatOf(file, code), source: `${code}\n\n//# sourceURL=${url}`, shortCircuit: true }
}
