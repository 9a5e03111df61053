/** The suite of test/suites/cc3mSource.ts on local disk; test/integration/cc3m.test.ts runs it on S3. */
import { localBackend } from '../fixtures/backends.js';
import { cc3mSourceTests } from '../suites/cc3mSource.js';

cc3mSourceTests(localBackend(), { pyarrow: false });
