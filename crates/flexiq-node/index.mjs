// flexiq for Node, as an ES module: `import { Queue } from 'flexiq'`.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const flexiq = require('./index.cjs');

export const { Queue, Worker, JobContext, WorkflowJobs, FlexiqError, reservedSettingPrefixes, CONTRACT_LEVEL, EVENT_KINDS } = flexiq;
export default flexiq;
