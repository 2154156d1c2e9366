/** Background jobs: the registry core keeps and the output ring each job's lines live in. */
export {
  JobRegistry,
  DEFAULT_JOB_MAX_CHARS,
  DEFAULT_JOB_MAX_LINE_CHARS,
  DEFAULT_JOB_MAX_LINES,
  DEFAULT_MAX_FINISHED_JOBS,
  DEFAULT_MAX_RUNNING_JOBS,
  type JobInfo,
  type JobOutput,
  type JobRegistryOptions,
  type JobStatus,
  type StartJob,
} from './registry.js';
export { ENDED_TAIL_CHARS, elapsedText, jobEndedText, jobName, lineText, newestWithin } from './format.js';
export { JobReaper } from './reaper.js';
export { OutputRing, type OutputLine, type OutputStream, type RingLimits } from './output-ring.js';
