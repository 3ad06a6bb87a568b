// spillway's own version: a scheduler refuses workers of another one.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PACKAGE_ROOT } from './paths'

export const VERSION: string = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')).version
