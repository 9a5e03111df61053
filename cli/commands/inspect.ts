/**
 * `mmif inspect`: prints a few samples, pairs or rejects of a build in readable form, to check what a
 * build made without opening its files.
 */
import { parseFlags } from '../../config/commandFlags.js';
import type { DpoRecord, InstructRecord, RejectRecord } from '../../output/contracts/records.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { dpoRecordFromLine, instructRecordFromLine } from '../../output/formats/sharegpt.js';
import { openStore } from '../../storage/openStore.js';
import { getJson } from '../../storage/objectStore.js';
import type { BuildPlan, StoredConfig } from '../../pipeline/planning/planBuild.types.js';
import type { ChatPairSharegptRow, ChatSharegptRow } from '../../output/formats/chatFormats.js';
import type { Verdict } from '../../domain/verdict.js';
import { CliError, EXIT } from '../exitCodes.js';
import { s3FromEnv } from '../s3FromEnv.js';
import { stageLabel } from '../wording.js';
import { reasonAfterStage } from '../../config/rejectionReasons.js';

export const INSPECT_USAGE = `usage: mmif inspect --output URI --build-id ID [--shard N] [-n COUNT] [--dpo] [--rejects]
  Print COUNT (default 3) samples of the build (its committed shards in order; --shard N: that shard
  only) in readable form: instruction, constraints with how each
  was verified and its verdict, the answer (a multiturn build: each chat turn by turn with its
  verdicts and PIF); --dpo shows pairs (chosen, rejected, dropped constraints or forgotten instruction);
  --rejects shows the shard's rejected samples with their reasons. S3 endpoints come from the
  environment (MMIF_S3_ENDPOINT, AWS_*).`;

export async function inspectCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({
    args,
    options: {
      output: { type: 'string' },
      'build-id': { type: 'string' },
      shard: { type: 'string' },
      n: { type: 'string', short: 'n', default: '3' },
      dpo: { type: 'boolean' },
      rejects: { type: 'boolean' },
    },
  });
  if (!values.output || !values['build-id']) throw new CliError(INSPECT_USAGE, EXIT.usage);
  const count = Number(values.n);
  const store = openStore(values.output, s3FromEnv());
  const layout = buildLayout(values['build-id']);
  // A multiturn build's records are chats and turn-level pairs, in chat/ and chat-dpo/.
  const multiturn = (await getJson<StoredConfig>(store, layout.config))?.config.mode === 'multiturn';
  const keyOf = (shard: number) =>
    values.rejects
      ? layout.rejects(shard)
      : multiturn
        ? values.dpo
          ? layout.chatDpoJsonl(shard)
          : layout.chatJsonl(shard)
        : values.dpo
          ? layout.dpoJsonl(shard)
          : layout.instructJsonl(shard);
  let all: string[];
  if (values.shard !== undefined) {
    const key = keyOf(Number(values.shard));
    const body = await store.get(key);
    if (!body) throw new CliError(`no ${key} in ${store.root}`, EXIT.notFound);
    all = linesOf(body);
  } else {
    // The build's shards in order, as its plan lists them; a shard not committed (running, failed) has no file yet.
    const plan = await getJson<BuildPlan>(store, layout.planSummary);
    if (!plan) throw new CliError(`no build '${values['build-id']}' in ${store.root} (no ${layout.planSummary})`, EXIT.notFound);
    const bodies = await Promise.all(Array.from({ length: plan.shardCount }, (_, shard) => store.get(keyOf(shard))));
    if (bodies.every((b) => !b)) throw new CliError(`no committed shard of ${values['build-id']} in ${store.root} yet`, EXIT.notFound);
    all = bodies.flatMap((b) => (b ? linesOf(b) : []));
  }
  const lines = all.slice(0, count);
  for (const line of lines) {
    console.log(
      values.rejects
        ? formatReject(JSON.parse(line) as RejectRecord)
        : multiturn
          ? values.dpo
            ? formatChatPair(JSON.parse(line) as ChatPairSharegptRow)
            : formatChat(JSON.parse(line) as ChatSharegptRow)
          : values.dpo
            ? formatPair(dpoRecordFromLine(line))
            : formatInstruct(instructRecordFromLine(line)),
    );
    console.log('-'.repeat(72));
  }
  const more = moreLine(
    lines.length,
    all.length,
    `${values.rejects ? 'rejects' : values.dpo ? 'pairs' : 'records'} in ${values.shard === undefined ? 'the build' : 'this shard'}`,
    args,
  );
  if (more) console.log(more);
  return EXIT.ok;
}

const linesOf = (body: Buffer) => body.toString('utf8').split('\n').filter(Boolean);

/** What `-n` left out, and the command that shows it all (the same arguments, `-n` set to the total); none when all was shown. */
export function moreLine(shown: number, total: number, what: string, args: readonly string[]): string | undefined {
  if (total <= shown) return undefined;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-n' || args[i] === '--n') i++;
    else if (!/^--?n=/.test(args[i]!)) rest.push(args[i]!);
  }
  return `... ${total - shown} more ${what} (${total} in all): \`mmif inspect ${[...rest, '-n', String(total)].join(' ')}\` shows them all`;
}

function formatConstraints(r: {
  constraints: ReadonlyArray<Pick<InstructRecord['constraints'][number], 'type' | 'method' | 'value'>>;
  verdicts: ReadonlyArray<InstructRecord['verdicts'][number] | undefined>;
}): string[] {
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
    `rejected answer fails: ${
      r.rejected_verdicts
        .filter((v) => !v.passed)
        .map((v) => `${v.type} (${v.detail})`)
        .join('; ') || '(nothing verified fails)'
    }`,
    `pair kept under dpo.validate ${r.pair_validation} after ${r.rejected_attempts} rejected answer(s)${refusals(r.pair_rule_rejections)}`,
    'chosen:',
    indent(r.chosen),
    'rejected:',
    indent(r.rejected),
  ].join('\n');
}

/** A chat turn by turn: the instruction added there, the question, the answer, its verdicts and PIF. */
function formatChat(row: ChatSharegptRow): string {
  const meta = JSON.parse(row.metadata) as {
    source: string;
    source_id: string;
    simulated: boolean;
    turns: Array<{ turn: number; verdicts: Verdict[]; pif: number; attempts: number }>;
  };
  const lines = [`${row.id}  (${meta.source} ${meta.source_id}, image ${row.images[0]}, ${meta.turns.length} turns${meta.simulated ? ', SIMULATED' : ''})`];
  for (const [i, turn] of meta.turns.entries()) {
    const verdicts = turn.verdicts.map((v) => `${v.type} ${v.passed ? 'PASS' : 'FAIL'}`).join(', ') || 'no instruction yet';
    lines.push(
      `turn ${turn.turn} (PIF ${turn.pif.toFixed(2)}, ${turn.attempts} attempt(s); ${verdicts}):`,
      indent(row.conversations[2 * i]!.value.replace(/^<image>\n/, '')),
      '  answer:',
      indent(row.conversations[2 * i + 1]!.value),
    );
  }
  return lines.join('\n');
}

function formatChatPair(row: ChatPairSharegptRow): string {
  const meta = JSON.parse(row.metadata) as { turn: number; forgotten_turn: number; forgotten_instruction: { type: string; value: string }; rejected_verdicts: Verdict[] };
  return [
    `${row.id}  (turn ${meta.turn} of chat ${row.id.replace(/-t\d+-dpo$/, '')}, image ${row.images[0]})`,
    `rejected answer generated without turn ${meta.forgotten_turn}'s instruction [${meta.forgotten_instruction.type}] ${meta.forgotten_instruction.value}`,
    `rejected answer fails: ${meta.rejected_verdicts
      .filter((v) => !v.passed)
      .map((v) => `${v.type} (${v.detail})`)
      .join('; ')}`,
    'last user turn:',
    indent(row.conversations.at(-1)!.value.replace(/^<image>\n/, '')),
    'chosen:',
    indent(row.chosen.value),
    'rejected:',
    indent(row.rejected.value),
  ].join('\n');
}

/** One reject: what was left out (a sample or a pair), at which stage and why (its reason without that stage repeated). */
/** A reject's line, then what its sample passed before it was rejected (RejectedContext), as far as it got. */
export function formatReject(r: RejectRecord): string {
  const lines = [`${r.id}  (${r.source} ${r.source_id}) ${r.kind} rejected at the ${stageLabel(r.stage)} stage: ${reasonAfterStage(r.reason, r.stage)}`];
  if (r.staged_image_path) lines.push(`image (staged, not published): ${r.staged_image_path}`);
  if (r.instruction) lines.push(`instruction: ${r.instruction}`);
  if (r.constraints) {
    // A refused sample's verdicts are its last answer's (each names its constraint); a refused pair's are its rejected answer's.
    const verdicts = r.kind === 'sample' ? (r.verdicts ?? []) : [];
    const byConstraint = r.constraints.map((_, i) => verdicts.find((v) => v.index === i));
    lines.push(
      verdicts.length > 0 ? "constraints, with the last answer's verdicts:" : 'constraints:',
      ...formatConstraints({ constraints: r.constraints, verdicts: byConstraint }),
    );
  }
  return lines.join('\n');
}

const indent = (text: string) =>
  text
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
