// Spillway's frames against DuckDB: a few hundred small generated tables
// (nulls, NaN, ±0, ±Infinity, int64's extremes, dates before 1970, '' and
// unicode) and queries (filters, expressions, group-bys with every
// aggregate, every join, sorts with head and tail, distinct, CSV and
// Parquet round trips), each answered by both engines and compared
// (docs/frame-differential.md). One shared cluster; a fixed seed, so a run
// is reproducible (SPILLWAY_DIFF_SEED, SPILLWAY_DIFF_RUNS and
// SPILLWAY_DIFF_PATH replay or widen it). The scale lane runs many more
// cases with a seed of its own (frame-differential-scale.spec.ts).
import test from 'ava'
import { differentialTest } from './differential/run'

differentialTest(test, '__test__/frame-differential.spec.ts', { runs: 400, seed: 43 })
