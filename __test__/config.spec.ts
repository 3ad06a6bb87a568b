import test from 'ava'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { availableCodecs, ConfigError, PROFILES, SetupConfig, shuffledCodecs } from 'spillway'
import { scratch } from './helpers'

function problemsOf(t: any, fn: () => unknown): { field: string; value: unknown; allowed: string }[] {
  const err = t.throws(fn, { instanceOf: ConfigError }) as ConfigError
  t.is(err.code, 'ERR_SPILLWAY_INVALID_CONFIG')
  return err.problems
}

test('defaults are the recipe\'s and dask_setup\'s', (t) => {
  const c = new SetupConfig()
  t.is(c.workloadType, 'io')
  t.is(c.memoryTarget, 0.75)
  t.is(c.memorySpill, 0.85)
  t.is(c.memoryPause, 0.92)
  t.is(c.memoryTerminate, 0.98)
  t.is(c.spillCompression, 'auto')
  t.false(c.commCompression)
  t.true(c.dashboard)
  t.is(c.dashboardPort, 0)
  t.is(c.dashboardAddress, '127.0.0.1')
  t.false(c.adaptiveMemory)
  t.false(c.silenceLogs)
  t.is(c.reserveMemGb, undefined, 'unset reserve is resolved against RAM by computeMemorySpec')
  t.is(c.maxMemGb, undefined)
  t.is(c.maxWorkers, undefined)
})

test('the recipe\'s pressure config is accepted as given', (t) => {
  const c = new SetupConfig({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, dashboard: false })
  t.like(c, { workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, dashboard: false })
  t.true(Object.isFrozen(c))
  try {
    ;(c as any).maxMemGb = 100
  } catch {
    // strict-mode code throws; sloppy code ignores the write. Either way the value must stay.
  }
  t.is(c.maxMemGb, 3)
})

test('the conservative profile has the recipe\'s values, and explicit options override it', (t) => {
  const c = SetupConfig.profile('conservative')
  t.like(c, {
    workloadType: 'cpu',
    reserveMemGb: 4,
    memoryTarget: 0.6,
    memorySpill: 0.7,
    memoryPause: 0.85,
    memoryTerminate: 0.95,
    spillCompression: 'auto',
    profile: 'conservative',
  })
  const o = SetupConfig.profile('conservative', { reserveMemGb: 2, memoryTarget: 0.5 })
  t.is(o.reserveMemGb, 2)
  t.is(o.memoryTarget, 0.5)
  t.is(o.memorySpill, 0.7)
  const viaCtor = new SetupConfig({ profile: 'conservative', maxWorkers: 3 })
  t.is(viaCtor.maxWorkers, 3)
  t.is(viaCtor.memoryPause, 0.85)
})

test('dask_setup\'s built-in profiles are available by name with its values', (t) => {
  t.deepEqual(Object.keys(PROFILES).sort(), ['climate_analysis', 'conservative', 'development', 'interactive', 'production', 'zarr_io_heavy'])
  t.like(SetupConfig.profile('climate_analysis'), { workloadType: 'cpu', reserveMemGb: 60 })
  t.like(SetupConfig.profile('zarr_io_heavy'), { workloadType: 'io', reserveMemGb: 40 })
  t.like(SetupConfig.profile('development'), { workloadType: 'mixed', maxWorkers: 2, reserveMemGb: 8 })
  t.like(SetupConfig.profile('production'), { workloadType: 'mixed', reserveMemGb: 80, dashboard: false, silenceLogs: true })
  t.like(SetupConfig.profile('interactive'), { workloadType: 'mixed', maxWorkers: 4, reserveMemGb: 20 })
  const p = problemsOf(t, () => SetupConfig.profile('fast'))
  t.is(p[0].field, 'profile')
  t.regex(p[0].allowed, /conservative.*climate_analysis/)
})

test('a profile named after an Object.prototype member is unknown, not a crash', (t) => {
  for (const name of ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf']) {
    const viaProfile = problemsOf(t, () => SetupConfig.profile(name))
    const viaCtor = problemsOf(t, () => new SetupConfig({ profile: name }))
    for (const p of [viaProfile, viaCtor]) {
      t.deepEqual(p.map((x) => x.field), ['profile'], name)
      t.is(p[0].value, name)
      t.regex(p[0].allowed, /^one of conservative, climate_analysis/, name)
    }
  }
})

test('every invalid field is rejected in ONE error that names each, its value and what is allowed', (t) => {
  const problems = problemsOf(
    t,
    () =>
      new SetupConfig({
        workloadType: 'gpu' as any,
        maxWorkers: 0,
        maxMemGb: -2,
        reserveMemGb: -1,
        dashboardPort: 70000,
        memoryTarget: 1.5,
        memorySpill: 0,
        spillCompression: 'brotli',
        threadsPerWorker: 0,
        dashboard: 'yes' as any,
        tempBaseDir: '',
      }),
  )
  const byField = Object.fromEntries(problems.map((p) => [p.field, p]))
  t.deepEqual(Object.keys(byField).sort(), [
    'dashboard',
    'dashboardPort',
    'maxMemGb',
    'maxWorkers',
    'memorySpill',
    'memoryTarget',
    'reserveMemGb',
    'spillCompression',
    'tempBaseDir',
    'threadsPerWorker',
    'workloadType',
  ])
  t.is(problems.length, 11, 'one problem per field')
  t.is(byField.workloadType.value, 'gpu')
  t.regex(byField.workloadType.allowed, /'cpu', 'io', 'mixed'/)
  t.is(byField.dashboardPort.value, 70000)
  t.regex(byField.dashboardPort.allowed, /0–65535/)
  t.regex(byField.memoryTarget.allowed, /\(0, 1\]/)
  t.is(byField.dashboard.allowed, 'a boolean')
  for (const codec of availableCodecs()) t.true(byField.spillCompression.allowed.includes(`'${codec}'`), codec)
  const err = t.throws(() => new SetupConfig({ maxWorkers: 0, spillCompression: 'brotli' })) as Error
  t.regex(err.message, /maxWorkers: got 0/)
  t.regex(err.message, /spillCompression: got "brotli"; allowed: .*'auto'.*'lz4'/)
})

test('thresholds must be in (0, 1] and strictly increasing', (t) => {
  t.notThrows(() => new SetupConfig({ memoryTarget: 0.1, memorySpill: 0.2, memoryPause: 0.3, memoryTerminate: 1 }))
  const eq = problemsOf(t, () => new SetupConfig({ memoryTarget: 0.85 }))
  t.deepEqual(eq.map((p) => p.field), ['memorySpill'])
  t.regex(eq[0].allowed, /greater than memoryTarget \(0\.85\)/)
  const twisted = problemsOf(t, () => new SetupConfig({ memoryTarget: 0.9, memorySpill: 0.8, memoryPause: 0.7, memoryTerminate: 0.6 }))
  t.deepEqual(twisted.map((p) => p.field), ['memorySpill', 'memoryPause', 'memoryTerminate'])
  for (const bad of [0, -0.1, 1.01, NaN, Infinity]) {
    const p = problemsOf(t, () => new SetupConfig({ memoryTerminate: bad }))
    t.is(p.length, 1, `only the range problem for ${bad}, no order problem on top`)
    t.is(p[0].field, 'memoryTerminate')
  }
  const typed = problemsOf(t, () => new SetupConfig({ memorySpill: '0.9' as any }))
  t.deepEqual(typed, [{ field: 'memorySpill', value: '0.9', allowed: 'a number, or false' }])
})

test('memory values: positive cap, non-negative reserve, reserve not above the cap', (t) => {
  t.notThrows(() => new SetupConfig({ maxMemGb: 3, reserveMemGb: 3 }))
  t.notThrows(() => new SetupConfig({ reserveMemGb: 0 }))
  const p = problemsOf(t, () => new SetupConfig({ maxMemGb: 3, reserveMemGb: 4 }))
  t.is(p.length, 1)
  t.is(p[0].field, 'reserveMemGb')
  t.regex(p[0].allowed, /at most maxMemGb \(3\)/)
  t.is(problemsOf(t, () => new SetupConfig({ maxMemGb: 0 }))[0].field, 'maxMemGb')
})

test('integers and ports: maxWorkers a positive integer, dashboardPort 0–65535', (t) => {
  for (const port of [0, 8787, 65535]) t.is(new SetupConfig({ dashboardPort: port }).dashboardPort, port)
  for (const port of [-1, 65536, 80.5]) t.is(problemsOf(t, () => new SetupConfig({ dashboardPort: port }))[0].field, 'dashboardPort')
  for (const n of [0, -1, 1.5]) t.is(problemsOf(t, () => new SetupConfig({ maxWorkers: n }))[0].field, 'maxWorkers')
})

test('every compiled codec and auto are accepted for spillCompression', (t) => {
  for (const codec of ['auto', ...availableCodecs()]) t.is(new SetupConfig({ spillCompression: codec }).spillCompression, codec)
})

test('the shuffled codecs are accepted for spillCompression, and unknown ones rejected with them listed', (t) => {
  for (const codec of shuffledCodecs()) t.is(new SetupConfig({ spillCompression: codec }).spillCompression, codec)
  t.true(shuffledCodecs().includes('lz4+shuffle'))
  const problems = problemsOf(t, () => new SetupConfig({ spillCompression: 'none+shuffle' }))
  t.is(problems[0].field, 'spillCompression')
  t.regex(problems[0].allowed, /'lz4'.*'lz4\+shuffle'.*'zstd\+shuffle'/)
})

test('unknown option names are rejected, with the closest known name for a typo', (t) => {
  const [camel] = problemsOf(t, () => new SetupConfig({ maxMemGB: 3 } as any))
  t.is(camel.field, 'maxMemGB')
  t.regex(camel.allowed, /did you mean maxMemGb\?/)
  const [snake] = problemsOf(t, () => new SetupConfig({ max_mem_gb: 3 } as any))
  t.regex(snake.allowed, /did you mean maxMemGb\?/)
  const [slip] = problemsOf(t, () => new SetupConfig({ memoryTraget: 0.7 } as any))
  t.regex(slip.allowed, /did you mean memoryTarget\?/)
  const [nothingLike] = problemsOf(t, () => new SetupConfig({ colour: 'blue' } as any))
  t.regex(nothingLike.allowed, /known options: .*maxMemGb/)
  const both = problemsOf(t, () => new SetupConfig({ maxMemGB: 3, maxWorkers: 0 } as any))
  t.deepEqual(both.map((p) => p.field).sort(), ['maxMemGB', 'maxWorkers'])
})

test('undefined options count as not given, so they do not hide a profile value', (t) => {
  const c = new SetupConfig({ profile: 'development', maxWorkers: undefined })
  t.is(c.maxWorkers, 2)
})

test('toJSON lists the options that are set and round-trips', (t) => {
  const c = new SetupConfig({ profile: 'conservative', maxMemGb: 8, tempBaseDir: '/scratch' })
  const json = c.toJSON()
  t.is(json.maxMemGb, 8)
  t.is(json.tempBaseDir, '/scratch')
  t.false('maxWorkers' in json)
  t.deepEqual(new SetupConfig(json).toJSON(), json)
  t.deepEqual(new SetupConfig(c).toJSON(), json)
  t.deepEqual(JSON.parse(JSON.stringify(c)), json)
})

test('fromFile loads JSON and YAML profiles with the same validation, overrides on top', (t) => {
  const dir = scratch(t)
  const json = join(dir, 'p.json')
  writeFileSync(json, JSON.stringify({ workloadType: 'cpu', maxMemGb: 3, reserveMemGb: 1, maxWorkers: 2 }))
  t.like(SetupConfig.fromFile(json), { workloadType: 'cpu', maxMemGb: 3, reserveMemGb: 1, maxWorkers: 2 })
  t.is(SetupConfig.fromFile(json, { maxWorkers: 1 }).maxWorkers, 1)

  const yaml = join(dir, 'p.yaml')
  writeFileSync(yaml, 'profile: conservative\nreserveMemGb: 2\nspillCompression: zstd\n')
  t.like(SetupConfig.fromFile(yaml), { workloadType: 'cpu', reserveMemGb: 2, memoryTarget: 0.6, spillCompression: 'zstd' })

  // dask_setup's own profile layout: metadata on top, snake_case options under config:, based_on.
  const dask = join(dir, 'dask.yml')
  writeFileSync(dask, 'name: fat_nodes\ndescription: climate but fatter\nbased_on: climate_analysis\nconfig:\n  reserve_mem_gb: 80\n  max_workers: null\n')
  t.like(SetupConfig.fromFile(dask), { workloadType: 'cpu', reserveMemGb: 80, maxWorkers: undefined })

  const bad = join(dir, 'bad.yaml')
  writeFileSync(bad, 'memoryTarget: 0.95\nmaxMemGB: 3\nworkloadType: gpu\n')
  const err = t.throws(() => SetupConfig.fromFile(bad), { instanceOf: ConfigError }) as ConfigError
  t.deepEqual(err.problems.map((p) => p.field).sort(), ['maxMemGB', 'memorySpill', 'workloadType'])
  t.true(err.message.includes(bad), 'the message names the file')

  const broken = join(dir, 'broken.json')
  writeFileSync(broken, '{"maxMemGb": 3,')
  t.throws(() => SetupConfig.fromFile(broken), { code: 'ERR_SPILLWAY_INVALID_CONFIG', message: /valid JSON or YAML/ })
  t.throws(() => SetupConfig.fromFile(join(dir, 'missing.yaml')), { code: 'ERR_SPILLWAY_INVALID_CONFIG', message: /readable file/ })
  const list = join(dir, 'list.yaml')
  writeFileSync(list, '- 1\n- 2\n')
  t.throws(() => SetupConfig.fromFile(list), { code: 'ERR_SPILLWAY_INVALID_CONFIG' })
})

test('options that are not an object are rejected', (t) => {
  t.throws(() => new SetupConfig(42 as any), { instanceOf: ConfigError })
  t.throws(() => new SetupConfig(null as any), { instanceOf: ConfigError })
})

test('maxSpill takes bytes, a size string or false (no cap, the default), and refuses anything else naming the field', (t) => {
  t.is(new SetupConfig().maxSpill, false)
  t.is(new SetupConfig({ maxSpill: 10 * 2 ** 30 }).maxSpill, 10 * 2 ** 30)
  t.is(new SetupConfig({ maxSpill: '10 GiB' }).maxSpill, '10 GiB')
  t.is(new SetupConfig({ maxSpill: false }).maxSpill, false)
  for (const bad of ['lots', 0, -5, true]) {
    const [p, ...rest] = problemsOf(t, () => new SetupConfig({ maxSpill: bad as any }))
    t.is(rest.length, 0)
    t.is(p!.field, 'maxSpill')
    t.regex(p!.allowed, /size such as '10 GiB'.*false/)
  }
})

test('memoryTarget and memorySpill may be false (off), left out of the order; pause and terminate may not', (t) => {
  const both = new SetupConfig({ memoryTarget: false, memorySpill: false })
  t.like(both, { memoryTarget: false, memorySpill: false, memoryPause: 0.92, memoryTerminate: 0.98 })
  t.is(new SetupConfig({ memoryTarget: false, memorySpill: 0.5, memoryPause: 0.6 }).memorySpill, 0.5)
  t.is(new SetupConfig({ memoryTarget: 0.9, memorySpill: false, memoryPause: 0.91 }).memoryTarget, 0.9)
  // An off threshold is skipped, the others must still increase.
  const [order] = problemsOf(t, () => new SetupConfig({ memoryTarget: false, memorySpill: 0.95, memoryPause: 0.9 }))
  t.is(order!.field, 'memoryPause')
  t.regex(order!.allowed, /greater than memorySpill \(0\.95\)/)
  for (const field of ['memoryPause', 'memoryTerminate']) {
    const [p, ...rest] = problemsOf(t, () => new SetupConfig({ [field]: false }))
    t.is(rest.length, 0)
    t.is(p!.field, field)
    t.regex(p!.allowed, /^a number; false is allowed only for memoryTarget, memorySpill, maxSpill$/)
  }
  const [p] = problemsOf(t, () => new SetupConfig({ memoryTarget: true as any }))
  t.is(p!.field, 'memoryTarget')
  t.is(p!.allowed, 'a number, or false')
})
