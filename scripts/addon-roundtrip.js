// Loads an addon directly (no package code, so it runs on old Node too) and
// round-trips data through every codec and a SpillBuffer that spills.
// Prints one JSON line; exits non-zero on any failure.
//
//   node scripts/addon-roundtrip.js path/to/spillway.linux-x64-gnu.node
'use strict'
const fs = require('fs')
const os = require('os')
const path = require('path')

async function main() {
  const addon = require(path.resolve(process.argv[2]))
  const data = Buffer.alloc(1 << 20)
  for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 255
  const codecs = addon.availableCodecs()
  for (const c of codecs) {
    const back = await addon.decompress(await addon.compress(data, c))
    if (!back.equals(data)) throw new Error('codec ' + c + ' did not round-trip')
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-roundtrip-'))
  try {
    const sb = new addon.NativeSpillBuffer({ dir: path.join(dir, 'spill'), memoryLimit: 1 << 20, target: 0.75, codec: 'lz4' })
    for (let i = 0; i < 8; i++) await sb.set('k' + i, Buffer.alloc(256 << 10, i))
    for (let i = 0; i < 8; i++) {
      if (!(await sb.get('k' + i)).equals(Buffer.alloc(256 << 10, i))) throw new Error('chunk ' + i + ' did not come back')
    }
    const spillCount = sb.metrics().spillCount
    await sb.close()
    if (spillCount === 0) throw new Error('nothing spilled')
    console.log(JSON.stringify({ node: process.version, napi: process.versions.napi, codecs, spillCount }))
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e && e.message ? e.message : String(e))
  process.exit(1)
})
