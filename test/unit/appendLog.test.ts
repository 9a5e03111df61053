/** The suite of test/suites/appendLog.ts on local disk; test/integration/appendLog.test.ts runs it on S3. */
import { localBackend } from '../fixtures/backends.js';
import { appendLogTests } from '../suites/appendLog.js';

appendLogTests(localBackend());
