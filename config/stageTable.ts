/**
 * The stage table of docs/architecture.md, written from the stage descriptors (config/stages.ts) by
 * `npm run docs:config`; test/unit/stages.test.ts fails when the committed table differs.
 */
import { PROMPT_VERSIONS } from '../domain/promptKinds.js';
import { ALL_STAGES, STAGES } from './stages.js';

const code = (xs: readonly string[]) => (xs.length ? xs.map((x) => `\`${x}\``).join(', ') : '-');

/** One row per descriptor: the modes that run it, what it makes, what it reads, calls and sends. */
export function stageTableMarkdown(): string {
  const rows = ALL_STAGES.map((s) => {
    const modes = Object.entries(STAGES)
      .filter(([, stages]) => (stages as readonly object[]).includes(s))
      .map(([mode]) => mode)
      .join(', ');
    const prompts = s.prompts.length ? s.prompts.map((p) => `\`${p}\` (${PROMPT_VERSIONS[p]})`).join(', ') : '-';
    return `| \`${s.name}\` | ${modes} | ${s.summary} | ${code(s.buildsOn)} | ${code(s.modelRoles)} | ${prompts} | ${s.batchable ? 'yes' : '-'} |`;
  });
  return ['| stage | modes | result | builds on | model roles | prompts (kind and version) | Batch API |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
}
