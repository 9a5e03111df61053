/** The suite of test/suites/imageSources.ts on S3 (versitygw); test/unit/sources.test.ts runs it on local disk. */
import { s3Backend } from '../fixtures/backends.js';
import { imageSourceTests } from '../suites/imageSources.js';

imageSourceTests(s3Backend());
