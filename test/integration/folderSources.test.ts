/** The suite of test/suites/folderSources.ts on S3 (versitygw); test/unit/folderSources.test.ts runs it on local disk. */
import { s3Backend } from '../fixtures/backends.js';
import { folderSourceTests } from '../suites/folderSources.js';

folderSourceTests(s3Backend());
