import { parseArgs } from 'node:util';
import type { DpoRecord, InstructRecord } from '../../output/records.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { dpoRecordFromLine, instructRecordFromLine } from '../../output/sharegpt.js';
import { openStore } from '../../storage/openStore.js';
import { CliError, EXIT } from '../exitCodes.js';
import { s3FromEnv } from '../s3FromEnv.js';

export const INSPECT_USAGE = `usage: mmif inspect --output URI --build-id ID [--shard N] [-n COUNT] [--dpo] [--rejects]
  Print COUNT (default 3) samples of a shard in readable form: instruction, constraints with how each
  was verified and its verdict, the answer; --dpo shows pairs (chosen, rejected, dropped constraints);
  --rejects shows the shard's rejected samples with their reasons. S3 endpoints come from the
  environment (MMIF_S3_ENDPOINT, AWS_*).`;

export async function inspectCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      output: { type: 'string' },
      'build-id': { type: 'string' },
      shard: { type: 'string', default: '0' },
      n: { type: 'string', short: 'n', default: '3' },
      dpo: { type: 'boolean' },
      rejects: { type: 'boolean' },
    },
  });
  if (!values.output || !values['build-id']) throw new CliError(INSPECT_USAGE, EXIT.usage);
  const shard = Number(values.shard);
  const count = Number(values.n);
  const store = openStore(values.output, s3FromEnv());
  const layout = buildLayout(values['build-id']);
  const key = values.rejects ? layout.rejects(shard) : values.dpo ? layout.dpoJsonl(shard) : layout.instructJsonl(shard);
  const body = await store.get(key);
  if (!body) throw new CliError(`no ${key} in ${store.root}`, EXIT.notFound);
  const lines = body.toString('utf8').split('\n').filter(Boolean).slice(0, count);
  for (const line of lines) {
    console.log(values.rejects ? formatReject(JSON.parse(line) as Record<string, unknown>) : values.dpo ? formatPair(dpoRecordFromLine(line)) : formatInstruct(instructRecordFromLine(line)));
    console.log('-'.repeat(72));
  }
  return EXIT.ok;
}

function formatConstraints(r: Pick<InstructRecord, 'constraints' | 'verdicts'>): string[] {
  return r.constraints.map((c, i) => {
    const v = r.verdicts[i];
    const verdict = v ? `${v.passed ? 'PASS' : 'FAIL'} (${v.detail})` : '';
    return `  ${i + 1}. [${c.type}, ${c.method}] ${c.value}  ${verdict}`;
  });
}

const refusals = (byRule: Record<string, number>) => {
  const list = Object.entries(byRule).map(([rule, n]) => `${rule} ${n}`);
  return list.length > 0 ? ` (refused: ${list.join(', ')})` : '';
};

const richnessNote = (r: InstructRecord | DpoRecord) =>
  r.image_richness ? `, richness ${r.image_richness.scorer} ${r.image_richness.score}${r.image_richness.tags !== undefined ? ` / ${r.image_richness.tags} tags` : ''}` : '';

function formatInstruct(r: InstructRecord): string {
  return [
    `${r.id}  (${r.source} ${r.source_id}, image ${r.image_path}${richnessNote(r)}${r.simulated ? ', SIMULATED' : ''})`,
    `instruction: ${r.instruction}`,
    `constraints (pass rate ${r.pass_rate.toFixed(2)}, ${r.answer_attempts} attempt(s)):`,
    ...formatConstraints(r),
    'answer:',
    indent(r.answer),
  ].join('\n');
}

function formatPair(r: DpoRecord): string {
  return [
    `${r.id}  (${r.source} ${r.source_id}, image ${r.image_path}${richnessNote(r)}, strategy ${r.strategy}, chosen ${r.chosen_model}, rejected ${r.rejected_model}${r.simulated ? ', SIMULATED' : ''})`,
    `instruction: ${r.instruction}`,
    'constraints:',
    ...formatConstraints(r),
    `dropped for the rejected answer: ${r.dropped_constraints.map((c) => c.type).join(', ') || '(none: image removed)'}`,
    `rejected answer fails: ${r.rejected_verdicts.filter((v) => !v.passed).map((v) => `${v.type} (${v.detail})`).join('; ') || '(nothing verified fails)'}`,
    `pair kept under dpo.validate ${r.pair_validation} after ${r.rejected_attempts} rejected answer(s)${refusals(r.pair_rule_rejections)}`,
    'chosen:',
    indent(r.chosen),
    'rejected:',
    indent(r.rejected),
  ].join('\n');
}

function formatReject(r: Record<string, unknown>): string {
  return `${r.id}  (${r.source} ${r.source_id}) rejected at ${r.stage}: ${r.reason}`;
}

const indent = (text: string) => text.split('\n').map((l) => `    ${l}`).join('\n');
