// Hardening the bag's file paths (issue 32): writers that would overwrite
// their own output or write '[object Object]', text that decodes wrong,
// Parquet values that lose precision, files read twice or not as planned.
// Through the package, real workers and real files in a scratch directory.
import test from 'ava'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-hardening-files-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

function scratch(name: string): string {
  const d = join(dir, name)
  mkdirSync(d)
  return d
}

test.serial("toTextfiles: the '*' must stand in the file name, checked when the bag is built", (t) => {
  const out = scratch('star')
  const b = bag.fromSequence(['a', 'b'], { npartitions: 2 })
  for (const p of [join(out, 'part-*', '..', 'all.txt'), join(out, '*', 'data.txt'), join(out, 'p-*-*.txt'), join(out, 'plain.txt')]) {
    const err = t.throws(() => b.toTextfiles(p), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT' })
    t.regex(err!.message, /pattern: got .*allowed: a path with one '\*' in its file name/s, p)
  }
  t.deepEqual(readdirSync(out), [])
})

test.serial('toTextfiles: an item that is not a string is refused by its type and index, nothing written', async (t) => {
  const out = scratch('not-strings')
  const cases: [unknown, RegExp][] = [
    [{ a: 1 }, /item 1 of its partition is an object, not a string/],
    [[1, 2], /item 1 of its partition is an array, not a string/],
    [7, /item 1 of its partition is a number, not a string/],
    [null, /item 1 of its partition is null, not a string/],
    [new Map(), /item 1 of its partition is a Map, not a string/],
  ]
  for (const [item, msg] of cases) {
    const err = await t.throwsAsync(client.compute(bag.fromSequence(['ok', item], { npartitions: 1 }).toTextfiles(join(out, 'part-*.txt'))), { code: 'ERR_SPILLWAY_WRITE' })
    t.regex(err!.message, msg)
    t.regex(err!.message, /part-0\.txt/)
    t.regex(err!.message, /JSON\.stringify/)
  }
  t.deepEqual(readdirSync(out), [])
})

test.serial('toTextfiles: a path component that is a file is ERR_SPILLWAY_WRITE naming the path', async (t) => {
  const out = scratch('component')
  writeFileSync(join(out, 'blocker'), 'a file, not a directory\n')
  const target = join(out, 'blocker', 'sub', 'part-*.txt')
  const err = await t.throwsAsync(client.compute(bag.fromSequence(['x'], { npartitions: 1 }).toTextfiles(target)), { code: 'ERR_SPILLWAY_WRITE' })
  t.regex(err!.message, /could not write .*blocker\/sub\/part-0\.txt/)
  t.regex(err!.message, /ENOTDIR|EEXIST/)
  t.is(readFileSync(join(out, 'blocker'), 'utf8'), 'a file, not a directory\n')
  t.false(existsSync(join(out, 'sub')))
})
