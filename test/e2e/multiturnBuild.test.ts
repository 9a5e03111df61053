/**
 * A quickstart-sized multiturn build (seed 002 chats) on a real Temporal dev server with the HTTP
 * simulator: every kept turn is re-verified here with the rule functions against every instruction in
 * force, PIF is recomputed, turn-level pairs are checked against the pair rule (the rejected answer
 * fails the instruction its context left out; the chosen one loses on none), and the outputs load in
 * LLaMA-Factory's own converter under every pinned `datasets` release, in TRL's collator steps and in
 * pyarrow + `datasets`. A re-run of the same build from its cache pays for no model call.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import { formatSummary } from '../../cli/summary.js';
import { inspectCommand } from '../../cli/commands/inspect.js';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import { CONSTRAINT_TYPES } from '../../domain/constraints/catalogue.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { QualityReport } from '../../output/reports/qualityReport.js';
import type { ChatPairSharegptRow, ChatSharegptRow } from '../../output/formats/chatFormats.js';
import type { ChatRecord, ChatTurnRecord, RejectRecord } from '../../output/contracts/records.js';
import { CHAT_CARD_CONFIGS } from '../../output/reports/datasetCard.js';
import { exportTrl } from '../../output/formats/export.js';
import type { ShardManifest } from '../../output/contracts/manifest.js';
import { MULTITURN_SYSTEM_TEXT } from '../../prompts/multiturnChat.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { getJson } from '../../storage/objectStore.js';
import { runVerifierCall } from '../../verification/functions.js';
import { assertCommittedShardsIntact } from '../harness/datasetChecks.js';
import { startStack, type Stack } from '../harness/stack.js';
import { DATASETS_VENVS, loadLikeLlamaFactory, runReader } from '../harness/trainerReaders.js';
import { chunkArticles } from '../harness/viewerData.js';

let stack: Stack;
let dir: string;
let store: LocalStore;
const BUILD_ID = 'mt-quickstart';
const layout = buildLayout(BUILD_ID);
const TURNS = 6;
const MAX_INSTRUCTIONS = 3;

type Instruction = ChatRecord['instructions'][number];
type ChatMeta = Omit<ChatRecord, 'id' | 'system' | 'image_path' | 'turns'> & { turns: Array<Omit<ChatTurnRecord, 'question' | 'answer'>> };

interface Built {
  report: BuildReport;
  chats: ChatSharegptRow[];
  pairs: ChatPairSharegptRow[];
  rejects: RejectRecord[];
}
let built: Built;

const config = (): BuildConfigInput => ({
  buildId: BUILD_ID,
  seed: 4,
  output: store.root,
  sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
  maxSamples: 8,
  shardSize: 4,
  sliceSize: 4,
  mode: 'multiturn',
  chat: { turns: TURNS, maxInstructions: MAX_INSTRUCTIONS },
  verification: { maxRegenerations: 8 },
  models: { default: { model: 'mmif-sim-vlm' }, rejected: { model: 'mmif-sim-vlm-mini' } },
});

async function runBuild(): Promise<Built> {
  const report: BuildReport = await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: BUILD_ID, args: [config()] });
  const read = async <T>(key: string) =>
    ((await store.get(key)) ?? Buffer.alloc(0))
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as T);
  const out: Built = { report, chats: [], pairs: [], rejects: [] };
  for (let shard = 0; shard < report.shards.planned; shard++) {
    out.chats.push(...(await read<ChatSharegptRow>(layout.chatJsonl(shard))));
    out.pairs.push(...(await read<ChatPairSharegptRow>(layout.chatDpoJsonl(shard))));
    out.rejects.push(...(await read<RejectRecord>(layout.rejects(shard))));
  }
  return out;
}

before(async () => {
  stack = await startStack({ simulator: { seed: 21, faults: { complianceRate: 0.85 } }, taskQueue: 'mmif-multiturn' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-multiturn-'));
  store = new LocalStore(path.join(dir, 'out'));
  built = await runBuild();
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const follows = (answer: string, instruction: Instruction) =>
  instruction.verifiers.every((call) => {
    const outcome = runVerifierCall(answer, call);
    assert.ok('passed' in outcome, `verifier ${call.func}: ${JSON.stringify(outcome)}`);
    return outcome.passed;
  });

test('every chat turn is verified against every instruction in force, by the rule functions, with its PIF', async (t) => {
  const { report, chats, rejects } = built;
  t.diagnostic(
    `planned ${report.counts.planned}, chats ${chats.length}, pairs ${report.counts.dpo}, rejected samples ${JSON.stringify(report.rejectsByStage)}, regenerated turns ${report.verification.regeneratedAnswers}`,
  );
  assert.equal(report.simulated, true);
  assert.equal(report.shards.failed, 0);
  assert.ok(chats.length >= 3, `chats kept: ${chats.length} of ${report.counts.planned}`);
  assert.equal(report.counts.instruct, chats.length);
  assert.equal(report.counts.rejectedSamples, rejects.filter((r) => r.kind === 'sample').length);
  // Every planned sample is a chat or a rejection: the report's per-source accounting balances.
  assert.equal(report.counts.planned, chats.length + report.counts.rejectedSamples);
  assert.ok(report.accounting.length > 0 && report.accounting.every((a) => a.balanced), JSON.stringify(report.accounting));
  // The report and the summary `mmif build` prints say what the counts are and where the files are.
  assert.equal(report.mode, 'multiturn');
  const summary = formatSummary(report);
  assert.match(summary, new RegExp(`-> ${chats.length} chats, ${report.counts.dpo} turn-level pairs`));
  assert.match(summary, /shard 0: .*\/chat\/parquet\/shard-00000\.parquet, .*\/chat-dpo\/parquet\/shard-00000\.parquet/);
  assert.match(summary, /datasets mmif_chat, mmif_chat_dpo/);
  // `export --format mmifeval` refuses a multiturn build, and this one reserved no chats for `mmif eval --multiturn`: no MM-IFEval line.
  assert.doesNotMatch(summary, /MM-IFEval/);
  for (const r of rejects.filter((x) => x.kind === 'sample' && x.stage === 'chat')) {
    assert.match(r.reason, /^chat: below-threshold: turn \d+ PIF 0\.\d\d < 1 after 9 answers; failed: #\d/, 'a rejected chat names its turn and instructions');
  }
  const ruleTypes = new Set(CONSTRAINT_TYPES.filter((t) => t.verifiers.length > 0 && (t.evaluation === 'rule' || t.evaluation === 'rule_and_direct_judge')).map((t) => t.key));
  let verdicts = 0;
  for (const row of chats) {
    const meta = JSON.parse(row.metadata) as ChatMeta;
    assert.equal(row.system, MULTITURN_SYSTEM_TEXT);
    assert.deepEqual(row.images, [`images/${meta.image_sha256.slice(0, 2)}/${meta.image_sha256}.jpg`]);
    // The chat: alternating human/gpt, one pair per question turn, <image> once, opening the first turn.
    assert.equal(row.conversations.length, 2 * TURNS);
    row.conversations.forEach((t, i) => assert.equal(t.from, i % 2 === 0 ? 'human' : 'gpt'));
    assert.equal(
      row.conversations
        .map((t) => t.value)
        .join('\n')
        .split('<image>').length - 1,
      1,
    );
    assert.ok(row.conversations[0]!.value.startsWith('<image>\n'));
    // Seed 002 §1: the first question gets an instruction; at most maxInstructions, distinct rule-checked types.
    assert.equal(meta.instructions[0]?.turn, 1);
    assert.ok(meta.instructions.length >= 1 && meta.instructions.length <= MAX_INSTRUCTIONS);
    assert.equal(new Set(meta.instructions.map((x) => x.type)).size, meta.instructions.length);
    assert.ok(
      meta.instructions.every((x) => ruleTypes.has(x.type) && x.verifiers.length > 0),
      JSON.stringify(meta.instructions),
    );
    // Only code-checkable types are offered (shown with a checkable example), so none is dropped as judged.
    assert.deepEqual(
      meta.removed_instructions.filter((r) => r.reason.startsWith('not rule-checked')),
      [],
      `${row.id}: an offered type was dropped as judged`,
    );
    assert.equal(meta.turns.length, TURNS);
    for (const [i, turn] of meta.turns.entries()) {
      const answer = row.conversations[2 * i + 1]!.value;
      const human = row.conversations[2 * i]!.value.replace(/^<image>\n/, '');
      const added = meta.instructions.find((x) => x.turn === turn.turn);
      assert.equal(turn.instruction, added?.value ?? null);
      if (added) assert.ok(human.startsWith(`${added.value}\n\n`), 'the instruction is written before the question of its turn');
      const inForce = meta.instructions.filter((x) => x.turn <= turn.turn);
      // Re-verified here, independently of the build: each verdict is the rule functions' on the answer.
      const followed = inForce.map((x) => follows(answer, x));
      assert.deepEqual(
        turn.verdicts.map((v) => v.passed),
        followed,
        `${row.id} turn ${turn.turn}`,
      );
      assert.deepEqual(
        turn.verdicts.map((v) => v.type),
        inForce.map((x) => x.type),
      );
      assert.equal(turn.pif, followed.filter(Boolean).length / followed.length);
      assert.equal(turn.pif, 1, 'pifThreshold 1: every kept turn follows every instruction in force');
      verdicts += followed.length;
    }
  }
  assert.ok(verdicts > chats.length * TURNS, 'turns were checked against more than one instruction');
  assert.ok(report.verification.byMethod.rule!.total === verdicts && report.verification.byMethod.rule!.passed === verdicts);
});

test('turn-level pairs: the rejected answer fails the instruction its context left out, the chosen one loses on none', async () => {
  const { report, chats, pairs, rejects } = built;
  assert.ok(pairs.length > 0, 'some turn-level pairs are kept');
  assert.equal(report.counts.dpo, pairs.length);
  const byId = new Map(chats.map((c) => [c.id, c]));
  for (const pair of pairs) {
    const meta = JSON.parse(pair.metadata) as {
      chat_id: string;
      turn: number;
      forgotten_turn: number;
      forgotten_instruction: { type: string; value: string };
      chosen_verdicts: unknown[];
      rejected_pif: number;
    };
    const chat = byId.get(meta.chat_id)!;
    assert.ok(chat, `pair ${pair.id} belongs to a kept chat`);
    const chatMeta = JSON.parse(chat.metadata) as ChatMeta;
    // The prompt is the chat up to this turn (ending on its human turn); chosen is the chat's own answer there.
    assert.deepEqual(pair.conversations, chat.conversations.slice(0, 2 * meta.turn - 1));
    assert.deepEqual(pair.chosen, chat.conversations[2 * meta.turn - 1]);
    assert.equal(pair.rejected.from, 'gpt');
    assert.equal(pair.system, chat.system);
    assert.ok(meta.forgotten_turn < meta.turn, 'the left-out instruction was given at an earlier turn');
    const inForce = chatMeta.instructions.filter((x) => x.turn <= meta.turn);
    const forgotten = inForce.find((x) => x.turn === meta.forgotten_turn)!;
    assert.deepEqual(meta.forgotten_instruction, { type: forgotten.type, value: forgotten.value });
    assert.equal(follows(pair.rejected.value, forgotten), false, `${pair.id}: the rejected answer fails the forgotten instruction`);
    for (const x of inForce) {
      assert.ok(follows(pair.chosen.value, x) || !follows(pair.rejected.value, x), `${pair.id}: the chosen answer loses on ${x.type}`);
    }
    assert.equal(meta.rejected_pif, inForce.filter((x) => follows(pair.rejected.value, x)).length / inForce.length);
  }
  // Pairs the rule discarded are recorded, naming the turn and the instruction left out.
  for (const r of rejects.filter((x) => x.kind === 'pair')) {
    assert.equal(r.stage, 'chat');
    assert.match(r.reason, /^chat: (uninformative-pair|chosen-loses): turn \d+, answer made without turn \d+'s instruction #\d+ \w+ \(".+"\): /);
  }
  assert.equal(report.counts.rejectedPairs, rejects.filter((x) => x.kind === 'pair').length);
});

test("the chats and pairs load in LLaMA-Factory's own converter under datasets 2.16.0, 3.6.0, 4.0.0 and the newest", async () => {
  const { report, chats, pairs } = built;
  const info = (await getJson<Record<string, { file_name: string }>>(store, layout.datasetInfo))!;
  assert.deepEqual(Object.keys(info), ['mmif_chat', 'mmif_chat_dpo']);
  for (const venv of DATASETS_VENVS) {
    const out = await loadLikeLlamaFactory(venv.python, path.join(store.root, BUILD_ID), path.join(dir, `hf-${venv.label}`));
    const chat = out.entries.mmif_chat!;
    const dpo = out.entries.mmif_chat_dpo!;
    for (const [name, entry, rows] of [
      ['mmif_chat', chat, report.counts.instruct],
      ['mmif_chat_dpo', dpo, report.counts.dpo],
    ] as const) {
      assert.equal(entry.error, undefined, `${venv.label} ${name}: ${entry.error}`);
      assert.equal(entry.rows, rows, `${venv.label} ${name}`);
      assert.deepEqual(entry.problems, [], `${venv.label} ${name}`);
      assert.ok(
        entry.systems.every((s) => s === MULTITURN_SYSTEM_TEXT),
        `${venv.label} ${name}: the system column is read`,
      );
    }
    // Shard files are listed in directory order: compare by id.
    assert.deepEqual([...chat.ids].sort(), chats.map((c) => c.id).sort());
    // The converter sees every turn: 2T - 1 prompt messages and the last answer as the response.
    assert.ok(
      chat.prompt_messages.every((n) => n === 2 * TURNS - 1),
      `${venv.label}: ${chat.prompt_messages}`,
    );
    assert.ok(chat.responses.every((n) => n === 1));
    assert.equal(dpo.attr.ranking, true);
    const promptMessages = new Map(dpo.ids.map((id, i) => [id, dpo.prompt_messages[i]]));
    assert.deepEqual(new Map(pairs.map((p) => [p.id, p.conversations.length])), promptMessages, "each pair's prompt is its chat up to the turn");
    assert.ok(
      dpo.responses.every((n) => n === 2),
      'a ranking pair: chosen and rejected',
    );
  }
});

test("TRL: the export's multi-turn SFT and conversational DPO rows pass TRL's own collator steps", async () => {
  const { chats, pairs } = built;
  await exportTrl(store, layout);
  const venv = DATASETS_VENVS.at(-1)!;
  const out = await runReader<{ splits: Record<'sft' | 'dpo', { rows: number; columns: string[]; ids: string[]; problems: string[]; texts: string[][] }> }>(
    venv.python,
    'trl_check.py',
    [path.join(store.root, BUILD_ID, 'trl')],
    { HF_CACHE_DIR: path.join(dir, 'trl-cache') },
  );
  const { sft, dpo } = out.splits;
  assert.deepEqual(sft.problems, []);
  assert.deepEqual(dpo.problems, []);
  assert.deepEqual(
    sft.ids,
    chats.map((c) => c.id),
  );
  const plain = (value: string) => value.replace(/^<image>\n/, '');
  assert.deepEqual(
    sft.texts,
    chats.map((c) => [MULTITURN_SYSTEM_TEXT, ...c.conversations.map((t) => plain(t.value))]),
    'system, then every turn verbatim',
  );
  assert.deepEqual(
    dpo.texts,
    pairs.map((p) => [MULTITURN_SYSTEM_TEXT, ...p.conversations.map((t) => plain(t.value)), p.chosen.value, p.rejected.value]),
  );
});

test('Parquet: one Arrow type per column, images decoded, per-turn verdicts and PIF in the metadata', async () => {
  const { chats, pairs } = built;
  const manifests = await Promise.all(Array.from({ length: built.report.shards.planned }, (_, s) => getJson<ShardManifest>(store, layout.manifest(s))));
  const files = (folder: string) =>
    manifests.flatMap((m) => m!.files.filter((f) => f.path.startsWith(`${folder}/parquet/`) && f.rows > 0).map((f) => path.join(store.root, BUILD_ID, f.path)));
  type Read = {
    arrow_types: Record<string, string>;
    hf_features: Record<string, string>;
    rows: Array<{
      id: string;
      system: string;
      conversations: unknown[];
      chosen: unknown;
      metadata: ChatMeta & { turn?: number; source: string; source_id: string; license: string; image_sha256: string; simulated: boolean };
      provenance: Record<string, unknown>;
      decoded_image: { mode: string; size: number[] };
    }>;
  };
  const python = DATASETS_VENVS.at(-1)!.python;
  const chatRead = await runReader<Read>(python, 'read_chat_parquet.py', files('chat'), { HF_CACHE_DIR: path.join(dir, 'pq-chat') });
  assert.equal(chatRead.hf_features.image, 'Image');
  assert.equal(chatRead.arrow_types.metadata, 'string');
  assert.deepEqual(
    chatRead.rows.map((r) => r.id),
    chats.map((c) => c.id),
  );
  for (const [i, row] of chatRead.rows.entries()) {
    assert.deepEqual(row.conversations, chats[i]!.conversations);
    assert.deepEqual(row.metadata, JSON.parse(chats[i]!.metadata));
    assert.ok(row.metadata.turns.every((t) => typeof t.pif === 'number' && t.verdicts.length > 0));
    assert.equal(row.decoded_image.mode, 'RGB');
    const { source, source_id, license, image_sha256, simulated } = row.metadata;
    assert.deepEqual(row.provenance, { source, source_id, license, image_sha256, simulated }, 'provenance in columns of their own');
    assert.equal(row.provenance.simulated, true);
  }
  const pairRead = await runReader<Read>(python, 'read_chat_parquet.py', files('chat-dpo'), { HF_CACHE_DIR: path.join(dir, 'pq-pairs') });
  assert.deepEqual(
    pairRead.rows.map((r) => r.id),
    pairs.map((p) => p.id),
  );
  assert.deepEqual(
    pairRead.rows.map((r) => r.chosen),
    pairs.map((p) => p.chosen),
  );
  for (const row of pairRead.rows) {
    const { source, source_id, license, image_sha256, simulated } = row.metadata;
    assert.deepEqual(row.provenance, { source, source_id, license, image_sha256, simulated });
  }
});

test('the dataset card names the chat configs, which load_dataset(<dataset root>) finds and loads; the viewer page shows the chats', async () => {
  const { report } = built;
  const seen = await runReader<
    { config_names: string[]; default: { rows: number }; card_data: { tags: string[] } } & Record<string, { rows: number; columns: string[]; image_feature: string }>
  >(DATASETS_VENVS.at(-1)!.python, 'card_check.py', [path.join(store.root, BUILD_ID)], { HF_CACHE_DIR: path.join(dir, 'card-cache') });
  assert.deepEqual([...seen.config_names].sort(), ['chat', 'chat_dpo']);
  assert.equal(seen.chat!.rows, report.counts.instruct);
  assert.equal(seen.chat_dpo!.rows, report.counts.dpo);
  assert.equal(seen.default.rows, report.counts.instruct, 'the default config is chat');
  for (const c of CHAT_CARD_CONFIGS) {
    assert.equal(seen[c.name]!.image_feature, 'Image');
    for (const [column] of c.features) assert.ok(seen[c.name]!.columns.includes(column), `the card describes ${c.name}.${column}, which the data has`);
  }
  assert.ok(seen.card_data.tags.includes('simulated'));
  // The viewer page beside the card shows every chat and pair (its data files hold their articles).
  const page = (await store.get(layout.viewer))!.toString();
  const articles: string[] = [];
  for await (const { key } of store.list(`${layout.root}/viewer-data/`)) if (key.includes('/chunk-')) articles.push(...chunkArticles((await store.get(key))!.toString()));
  for (const c of built.chats)
    assert.ok(
      articles.some((a) => a.includes(`data-kind="chat" data-source="cc3m"`) && a.includes(`id="${c.id}"`)),
      c.id,
    );
  for (const p of built.pairs)
    assert.ok(
      articles.some((a) => a.includes(`data-kind="chat-dpo"`) && a.includes(`id="${p.id}"`)),
      p.id,
    );
  // Besides the chats and pairs, the page's "rejected samples and pairs" kind (its own articles).
  assert.equal(articles.filter((a) => /data-kind="chat(?:-dpo)?"/.test(a)).length, built.chats.length + built.pairs.length);
  assert.match(page, new RegExp(`<p>${built.chats.length} chats, ${built.pairs.length} turn-level pairs, \\d+ rejected samples and pairs\\.`));
});

test('the card and quality.json document the chats like single-turn data: counts per source, chat settings, per-turn PIF, every sample accounted for', async () => {
  const quality = (await getJson<QualityReport>(store, layout.quality))!;
  const { report, chats, pairs } = built;
  assert.ok(chats.length > 0 && pairs.length > 0, 'the build kept chats and pairs');
  assert.equal(quality.coverage.shardsWithStats, quality.coverage.committedShards, 'every committed shard carries stats');
  assert.deepEqual(quality.composition.bySource.cc3m && [quality.composition.bySource.cc3m.instruct, quality.composition.bySource.cc3m.dpo], [chats.length, pairs.length]);
  const turns = quality.multiturn!.turns;
  assert.deepEqual(
    turns.map((t) => t.turn),
    Array.from({ length: TURNS }, (_, i) => i + 1),
  );
  for (const t of turns) assert.equal(t.chats, chats.length, `every kept chat answers turn ${t.turn}`);
  // PIF recomputed from the records' per-turn metadata.
  const metas = chats.map((c) => JSON.parse(c.metadata) as ChatMeta);
  for (const t of turns) {
    const pifs = metas.map((m) => m.turns[t.turn - 1]!.pif);
    assert.ok(Math.abs(t.pif! - pifs.reduce((a, b) => a + b, 0) / pifs.length) < 1e-9, `turn ${t.turn} PIF`);
    assert.equal(t.pif_1_1, pifs.filter((p) => p === 1).length / pifs.length);
  }
  assert.equal(
    turns.reduce((n, t) => n + t.pairs, 0),
    pairs.length,
  );
  assert.equal(quality.multiturn!.corpus.turns, chats.length * TURNS);
  assert.ok(quality.vacuous.total.rule > 0, "the kept answers' rule verdicts are counted for vacuity");

  const card = (await store.get(`${BUILD_ID}/README.md`))!.toString();
  assert.match(card, new RegExp(`\\| cc3m \\| ${chats.length} \\| ${pairs.length} \\| \\d+ \\| \\d+ \\|`), 'the sources table counts chats and pairs');
  assert.match(card, /\| source \| chats \(SFT\) \| turn-level pairs \|/);
  assert.match(card, new RegExp(`- Chats: ${TURNS} question turns each, up to ${MAX_INSTRUCTIONS} global instructions`));
  assert.match(card, /- Turn filter: a turn's answer is kept when its PIF reaches 1, up to 8 regenerations/);
  assert.doesNotMatch(card, /Post-filter|DPO strategies|Training prompt template/, 'no single-turn setting is listed');
  assert.match(card, /### Instruction following of the data, per turn \(seed 002\)/);
  assert.match(card, new RegExp(`\\| 1 \\| ${chats.length} \\| \\d\\.\\d\\d \\| \\d\\.\\d\\d \\|`));
  assert.doesNotMatch(card, /no records/);
  const n = report.counts;
  assert.match(card, new RegExp(`- Samples planned: ${n.planned} = accepted as chats ${n.instruct} \\(.*\\) \\+ held out for evaluation 0 \\+ rejected ${n.rejectedSamples}`));
  assert.equal(n.planned, n.instruct + n.rejectedSamples, 'planned and accepted add up');
  assert.match(card, /\| cc3m #0 \| \d+ \| .* \| yes \|/, 'the accounting table balances');
});

test('mmif inspect prints a chat turn by turn with verdicts and PIF, and a pair with the instruction its rejected answer lacked', async () => {
  const printed: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => void printed.push(args.join(' '));
  try {
    await inspectCommand(['--output', store.root, '--build-id', BUILD_ID, '-n', '1']);
    await inspectCommand(['--output', store.root, '--build-id', BUILD_ID, '-n', '1', '--dpo']);
  } finally {
    console.log = log;
  }
  // Each listing ends by saying how many more the build holds (inspect -n 1 reads every committed shard).
  const [chat] = printed;
  const pair = printed.find((p) => p.includes('rejected answer generated without'));
  assert.ok(
    printed.some((p) => /^\.\.\. \d+ more \S+.* \(\d+ in all\)/.test(p)),
    printed.join('\n'),
  );
  const first = built.chats.find((c) => c.id === chat!.split(' ')[0])!;
  assert.ok(first, chat);
  assert.match(chat!, new RegExp(`${TURNS} turns, SIMULATED`));
  assert.equal(chat!.match(/^turn \d+ \(PIF 1\.00, \d+ attempt\(s\); /gm)?.length, TURNS);
  assert.ok(chat!.includes(first.conversations[1]!.value.split('\n')[0]!), 'the first answer is printed');
  assert.match(pair!, /rejected answer generated without turn \d+'s instruction \[\w+\] /);
});

test('a re-run of the build from its cache pays for no model call and writes the same bytes', async () => {
  const sums = await assertCommittedShardsIntact(store, BUILD_ID, built.report.shards.planned);
  const requests = stack.simulator.stats().requests;
  // Forget every stage state and commit: each stage runs again, and finds every reply in the model cache.
  await rm(path.join(store.root, BUILD_ID, '_work', 'samples'), { recursive: true });
  await rm(path.join(store.root, BUILD_ID, 'manifests'), { recursive: true });
  const again = await runBuild();
  assert.equal(stack.simulator.stats().requests, requests, 'no request reached the endpoint');
  assert.deepEqual(await assertCommittedShardsIntact(store, BUILD_ID, again.report.shards.planned), sums);
  assert.ok(Object.values(again.report.usage).every((u) => u.costUsd === 0 || u.requests === u.cachedRequests));
});
