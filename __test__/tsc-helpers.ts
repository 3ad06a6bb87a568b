// tsc over a project of __test__/types, for the type tests: whether it
// passes, and what it printed.

import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'

const ROOT = join(__dirname, '..')
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
const run = promisify(execFile)

export async function tsc(project: string): Promise<{ ok: boolean; output: string }> {
  try {
    const r = await run(process.execPath, [TSC, '-p', project], { cwd: ROOT })
    return { ok: true, output: r.stdout + r.stderr }
  } catch (e: any) {
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` }
  }
}
