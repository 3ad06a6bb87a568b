// The cluster lane (scripts/test-lane.js cluster): real clusters, no ratio to memory.
import { laneConfig } from './lanes.mjs'

export default laneConfig('cluster')
