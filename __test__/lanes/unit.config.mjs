// The unit lane (scripts/test-lane.js unit): specs that start no cluster.
import { laneConfig } from './lanes.mjs'

export default laneConfig('unit')
