// The scale lane (scripts/test-lane.js scale): ratios to the workers' memory, measured alone.
import { laneConfig } from './lanes.mjs'

export default laneConfig('scale', { timeout: '5m' })
