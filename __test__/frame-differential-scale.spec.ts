// The differential suite of frame-differential.spec.ts at length: five
// times the generated cases against DuckDB, with a seed of its own. Fixed,
// so a CI run is reproducible; SPILLWAY_DIFF_SEED and SPILLWAY_DIFF_RUNS
// widen the search (docs/frame-differential.md).
import test from 'ava'
import { differentialTest } from './differential/run'

differentialTest(test, '__test__/frame-differential-scale.spec.ts', { runs: 2000, seed: 7 })
