/**
 * The source-type table of docs/sources.md, rendered from the registry (sources/registry.ts): one
 * row per type with its layouts, where its instruction comes from, its own config fields, the Hub
 * repositories (or other homes) it reads and its default licence note. Written between markers by
 * `npm run docs:config` (cli/writeConfigReference.ts); a test regenerates it and compares.
 */
import { SOURCE_DEFINITIONS } from './registry.js';

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
const code = (text: string) => `\`${text}\``;

export function sourceTableMarkdown(): string {
  const rows = SOURCE_DEFINITIONS.map((d) => {
    const fields = Object.keys(d.fields);
    return [code(d.type), d.docs.layout, d.docs.instruction, fields.length > 0 ? fields.map(code).join(', ') : '—', d.docs.hub.join(', '), cell(d.defaults.licenseNote)].join(
      ' | ',
    );
  });
  return [
    '| `type` | layout under `uri` | instruction | its own fields ([reference](configuration.md#sources)) | Hub repository or home | licence note (default) |',
    '|---|---|---|---|---|---|',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}
