/** The suite of test/suites/imageSources.ts on local disk; test/integration/sources.test.ts runs it on S3. */
import { localBackend } from '../fixtures/backends.js';
import { imageSourceTests } from '../suites/imageSources.js';

imageSourceTests(localBackend());
