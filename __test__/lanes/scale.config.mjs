// The scale lane (scripts/test-lane.js scale): ratios to the workers' memory, apart from the other lanes, in two shards (lanes.mjs).
import { laneConfig } from './lanes.mjs'

export default laneConfig('scale', { timeout: '5m' })
