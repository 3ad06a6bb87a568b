// Plain `npx ava` (or `npx ava __test__/x.spec.ts` for one spec): every spec,
// one file at a time. `npm test` and the other lanes run through
// __test__/lanes/*.config.mjs instead (docs/develop.md).
import { laneConfig } from './__test__/lanes/lanes.mjs'

export default { ...laneConfig('unit', { concurrency: 1, timeout: '15m' }), files: ['__test__/**/*.spec.ts'], environmentVariables: {} }
