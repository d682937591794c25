// flexiq/webhooks as an ES module: `import { verifySignature } from 'flexiq/webhooks'`.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const webhooks = require('./webhooks.cjs');

export const { SIGNATURE_HEADER, DEFAULT_TOLERANCE_SECS, verifySignature } = webhooks;
export default webhooks;
