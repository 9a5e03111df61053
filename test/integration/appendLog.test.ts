/** The suite of test/suites/appendLog.ts on S3 (versitygw); test/unit/appendLog.test.ts runs it on local disk. */
import { s3Backend } from '../fixtures/backends.js';
import { appendLogTests } from '../suites/appendLog.js';

appendLogTests(s3Backend());
