import test from 'ava'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bindingError, platformSuffix } from '../src/native/binding-error'

test('no binding that loads: the error names the platform, what was tried, the real cause and how to build one', (t) => {
  const bad = join(mkdtempSync(join(tmpdir(), 'spillway-binding-')), 'broken.node')
  writeFileSync(bad, 'not an ELF file')
  const r = spawnSync(process.execPath, ['-e', "try { require('spillway') } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message, details: e.details })) }"], {
    cwd: join(__dirname, '..'),
    encoding: 'utf8',
    env: { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: bad },
  })
  const e = JSON.parse(r.stdout)
  t.is(e.code, 'ERR_SPILLWAY_NATIVE_BINDING')
  t.regex(e.message, new RegExp(`${process.platform} ${process.arch}`))
  if (process.platform === 'linux') t.regex(e.message, /\((glibc [\d.]+|musl)\)/)
  t.regex(e.message, /broken\.node/)
  t.regex(e.message, /invalid ELF header|file too short|not a valid/i, 'the loader’s own reason, not only "Cannot find native binding"')
  t.regex(e.message, /npm install/)
  t.true(e.details.tried.some((x: string) => x.includes('spillway-')))
})

test('a glibc too old for the binary is said in plain words, with the cause the stock loader hides', (t) => {
  const stock = new Error('Cannot find native binding. npm has a bug related to optional dependencies')
  ;(stock as any).cause = Object.assign(new Error("/lib64/libc.so.6: version `GLIBC_2.28' not found (required by /x/spillway.linux-x64-gnu.node)"), {
    cause: new Error("Cannot find module 'spillway-linux-x64-gnu'"),
  })
  const e = bindingError(stock, 'linux', 'x64', 'glibc 2.17')
  t.is(e.code, 'ERR_SPILLWAY_NATIVE_BINDING')
  t.regex(e.message, /linux x64 \(glibc 2\.17\)/)
  t.regex(e.message, /GLIBC_2\.28' not found/)
  t.regex(e.message, /newer glibc/)
  t.regex(e.message, /spillway-linux-x64-gnu/)
  t.deepEqual(platformSuffix('linux', 'arm64', 'musl'), 'linux-arm64-musl')
  t.deepEqual(platformSuffix('darwin', 'arm64', undefined), 'darwin-arm64')
})
