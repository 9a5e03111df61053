/**
 * `npm run docs:config`: rewrites the generated reference at the end of docs/configuration.md from
 * the config schemas (config/configReference.ts). test/unit/configReference.test.ts fails when the
 * committed file differs from what this writes, so a schema change without a re-run is caught.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configReferenceMarkdown } from '../config/configReference.js';

export const CONFIG_DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs/configuration.md');
export const BEGIN = '<!-- BEGIN GENERATED REFERENCE: npm run docs:config -->';
export const END = '<!-- END GENERATED REFERENCE -->';

/** `doc` with the text between the markers replaced by the current reference. */
export function withReference(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/configuration.md: the markers ${BEGIN} ... ${END} are missing`);
  return `${doc.slice(0, start + BEGIN.length)}\n\n${configReferenceMarkdown()}\n\n${doc.slice(end)}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeFile(CONFIG_DOC, withReference(await readFile(CONFIG_DOC, 'utf8')));
  console.log(`wrote ${path.relative(process.cwd(), CONFIG_DOC)}`);
}
