/**
 * The product's folders as layers, lowest first: a folder imports only from its own level or below
 * (test/unit/layering.test.ts). Side folders (local/, simulator/, bench/, test/) are tooling and not
 * listed. The one list the tests that walk the product's source read.
 */
export const PRODUCT_FOLDERS = [
  'domain',
  'config',
  'prompts',
  'verification',
  'storage',
  'sources',
  'image',
  'llm',
  'pipeline',
  'output',
  'activities',
  'workflows',
  'worker',
  'cli',
];
