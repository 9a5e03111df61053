/**
 * The suite of test/suites/cc3mSource.ts on S3 (versitygw), and with its pyarrow-written side files on
 * both stores; test/unit/cc3m.test.ts runs the rest on local disk.
 */
import { localBackend, s3Backend } from '../fixtures/backends.js';
import { cc3mSourceTests } from '../suites/cc3mSource.js';

for (const backend of [localBackend(), s3Backend()]) cc3mSourceTests(backend, { pyarrow: true });
