// `import { frame } from 'spillway'`: the readers and the collection's types.

export { Frame, GroupBy, type AggOptions, type FrameTable } from './frame'
export { readCsv, type FrameCsvOptions } from './readers'
export { readText, type FrameTextOptions } from './read-text'
