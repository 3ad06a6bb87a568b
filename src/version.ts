// spillway's own version: a scheduler refuses workers of another one.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'

// dist/version.js and src/version.ts both sit one level below package.json.
export const VERSION: string = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')).version
