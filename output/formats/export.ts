/**
 * `mmif export`: trainer and evaluator formats made from a build's committed shards. It reads the
 * records back from the sharegpt shards (they hold every field), so it needs no model call and no
 * Temporal; every file is written under a deterministic key, so a re-run rewrites the same bytes.
 */
import { getJson, putJson, type ObjectStore } from '../../storage/objectStore.js';
import type { StoredConfig } from '../../pipeline/planning/planBuild.types.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import type { ShardManifest } from '../contracts/manifest.js';
import { mmifevalLines } from './mmifeval.js';
import type { ChatRecord, DpoRecord, InstructRecord } from '../contracts/records.js';
import { dpoRecordFromLine, instructRecordFromLine, jsonl } from './sharegpt.js';
import { loadImages } from './images.js';
import { trlChatDpoParquet, trlChatSftParquet, trlDpoParquet, trlSftParquet, type TrlImage } from './trl.js';
import { chatConversationFromLine, chatPairConversationFromLine, trlChatPairRow, trlChatRow, type ChatPairConversation } from './chatFormats.js';
import { mapLimit } from '../../domain/mapLimit.js';
import { PermanentError } from '../../domain/errors.js';
import { chatTurnTruths, groundTruthOf } from '../../domain/groundTruth.js';
import type { VacuousPolicy } from '../../domain/verdict.js';
import { verlParquet } from './verl.js';
import { chatPrompts, recordPrompt, rlvrParquet, type RlvrPrompt } from './rlvr.js';
import { llamaFactoryV1ChatLine, llamaFactoryV1ChatPairLine, llamaFactoryV1DpoLine, llamaFactoryV1Registration, llamaFactoryV1SftLine } from './llamafactoryV1.js';

export const EXPORT_FORMATS = ['trl', 'mmifeval', 'verl', 'rlvr', 'llamafactory-v1'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

interface ExportSummary {
  format: ExportFormat;
  files: string[];
  rows: number;
}

/** The build has no committed shard at that place (a wrong build id or output, or nothing finished yet). */
export class NoCommittedShardError extends PermanentError {
  override name = 'NoCommittedShardError';
}

export async function committedShards(store: ObjectStore, layout: BuildLayout): Promise<number[]> {
  const shards: number[] = [];
  for await (const { key } of store.list(layout.manifestsPrefix)) {
    const manifest = await getJson<ShardManifest>(store, key);
    if (manifest) shards.push(manifest.shard);
  }
  if (shards.length === 0) throw new NoCommittedShardError(`no committed shard under ${store.root}/${layout.manifestsPrefix}: is the build id right, has a shard finished?`);
  return shards.sort((a, b) => a - b);
}

export async function recordsOf<R>(store: ObjectStore, key: string, parse: (line: string) => R): Promise<R[]> {
  const body = await store.get(key);
  if (!body) throw new Error(`${key} is missing from ${store.root} although its shard is committed`);
  return body
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((line, i) => {
      try {
        return parse(line);
      } catch (err) {
        throw new Error(`${key} line ${i + 1}: not a record of this format (${err instanceof Error ? err.message : String(err)})`);
      }
    });
}

export async function exportTrl(store: ObjectStore, layout: BuildLayout): Promise<ExportSummary> {
  const summary: ExportSummary = { format: 'trl', files: [], rows: 0 };
  if ((await getJson<StoredConfig>(store, layout.config))?.config.mode === 'multiturn') return exportChatTrl(store, layout, summary);
  for (const shard of await committedShards(store, layout)) {
    const sft = await recordsOf<InstructRecord>(store, layout.instructJsonl(shard), instructRecordFromLine);
    const dpo = await recordsOf<DpoRecord>(store, layout.dpoJsonl(shard), dpoRecordFromLine);
    const images = await loadImages(store, layout, [...sft, ...dpo]);
    const bytes = (r: { image_sha256: string }) => images.get(r.image_sha256)!;
    await store.put(layout.trlSft(shard), await trlSftParquet(sft, bytes));
    await store.put(layout.trlDpo(shard), await trlDpoParquet(dpo, bytes));
    summary.files.push(layout.trlSft(shard), layout.trlDpo(shard));
    summary.rows += sft.length + dpo.length;
  }
  return summary;
}

/** A multiturn build's chats and turn-level pairs as TRL rows (output/formats/chatFormats.ts), same files. */
async function exportChatTrl(store: ObjectStore, layout: BuildLayout, summary: ExportSummary): Promise<ExportSummary> {
  for (const shard of await committedShards(store, layout)) {
    const chats = await recordsOf(store, layout.chatJsonl(shard), trlChatRow);
    const pairs = await recordsOf(store, layout.chatDpoJsonl(shard), trlChatPairRow);
    // Each image once: a chat and its turn-level pairs share one.
    const paths = [...new Set([...chats, ...pairs].map((r) => r.imagePath))];
    const bytes = await mapLimit(paths, 16, async (imagePath) => {
      const body = await store.get(`${layout.root}/${imagePath}`);
      if (!body) throw new Error(`image ${imagePath} is missing from ${store.root}/${layout.root}`);
      return body;
    });
    const images = new Map(paths.map((path, i) => [path, bytes[i]!]));
    const image = (imagePath: string): TrlImage => ({ bytes: images.get(imagePath)!, path: imagePath });
    const sftRows = chats.map((c) => ({ id: c.id, image: image(c.imagePath), messages: c.messages }));
    const dpoRows = pairs.map((p) => ({ id: p.id, image: image(p.imagePath), prompt: p.prompt, chosen: p.chosen, rejected: p.rejected }));
    await store.put(layout.trlSft(shard), await trlChatSftParquet(sftRows));
    await store.put(layout.trlDpo(shard), await trlChatDpoParquet(dpoRows));
    summary.files.push(layout.trlSft(shard), layout.trlDpo(shard));
    summary.rows += chats.length + pairs.length;
  }
  return summary;
}

type RlFormat = 'verl' | 'rlvr' | 'llamafactory-v1';

/**
 * The RL formats (verl, rlvr) and LLaMA-Factory v1's: the committed shards' accepted records (the
 * held-out split is in no shard's instruct/ or dpo/ files: it stays `--format mmifeval`'s), each with
 * its ground truth under the build's `verification.vacuous`. A multiturn build's chats go in the
 * formats' rows as conversations with a ground truth each (exportChatRl).
 */
export async function exportRl(store: ObjectStore, layout: BuildLayout, format: RlFormat): Promise<ExportSummary> {
  const config = (await getJson<StoredConfig>(store, layout.config))?.config;
  const vacuous = config?.verification.vacuous ?? 'fail';
  const summary: ExportSummary = { format, files: [], rows: 0 };
  if (config?.mode === 'multiturn') {
    await exportChatRl(store, layout, format, vacuous, summary);
  } else {
    const truth = (r: InstructRecord | DpoRecord) => groundTruthOf(r, vacuous);
    for (const shard of await committedShards(store, layout)) {
      const sft = await recordsOf<InstructRecord>(store, layout.instructJsonl(shard), instructRecordFromLine);
      if (format === 'llamafactory-v1') {
        const dpo = await recordsOf<DpoRecord>(store, layout.dpoJsonl(shard), dpoRecordFromLine);
        await store.put(layout.llamafactoryV1Sft(shard), jsonl(sft.map((r) => llamaFactoryV1SftLine(r, truth(r)))));
        await store.put(layout.llamafactoryV1Dpo(shard), jsonl(dpo.map((r) => llamaFactoryV1DpoLine(r, truth(r)))));
        summary.files.push(layout.llamafactoryV1Sft(shard), layout.llamafactoryV1Dpo(shard));
        summary.rows += sft.length + dpo.length;
        continue;
      }
      await writeRlPrompts(
        store,
        layout,
        format,
        shard,
        sft,
        sft.map((r) => recordPrompt(r, truth(r))),
        summary,
      );
    }
  }
  if (format === 'llamafactory-v1') await registerLlamaFactoryV1(store, layout, summary);
  return summary;
}

/**
 * A multiturn build's chats: `rlvr` and `verl` a prompt row per turn with an instruction in force (the
 * chat up to that question, the turn's ground truth); `llamafactory-v1` a chat per SFT sample with each turn's
 * ground truth, a turn-level pair per DPO sample with its turn's (found in the chat it was made from).
 */
async function exportChatRl(store: ObjectStore, layout: BuildLayout, format: RlFormat, vacuous: VacuousPolicy, summary: ExportSummary): Promise<void> {
  for (const shard of await committedShards(store, layout)) {
    const chats = await recordsOf(store, layout.chatJsonl(shard), chatConversationFromLine);
    if (format !== 'llamafactory-v1') {
      await writeRlPrompts(
        store,
        layout,
        format,
        shard,
        chats,
        chats.flatMap((c) => chatPrompts(c, vacuous)),
        summary,
      );
      continue;
    }
    const pairs = await recordsOf(store, layout.chatDpoJsonl(shard), chatPairConversationFromLine);
    const truths = new Map(chats.map((c) => [c.id, chatTurnTruths(c, vacuous)]));
    const pairTruth = (p: ChatPairConversation) => {
      const truth = truths.get(p.chat_id)?.find((t) => t.turn === p.turn)?.truth;
      if (!truth) throw new Error(`${layout.chatDpoJsonl(shard)}: pair ${p.id} names chat ${p.chat_id} turn ${p.turn}, which this shard's chats have no instruction in force at`);
      return truth;
    };
    await store.put(layout.llamafactoryV1Sft(shard), jsonl(chats.map((c) => llamaFactoryV1ChatLine(c, truths.get(c.id)!))));
    await store.put(layout.llamafactoryV1Dpo(shard), jsonl(pairs.map((p) => llamaFactoryV1ChatPairLine(p, pairTruth(p)))));
    summary.files.push(layout.llamafactoryV1Sft(shard), layout.llamafactoryV1Dpo(shard));
    summary.rows += chats.length + pairs.length;
  }
}

/** One shard's RL prompt rows as `format` (verl or rlvr), with the images of `imageRecords`. */
async function writeRlPrompts(
  store: ObjectStore,
  layout: BuildLayout,
  format: 'verl' | 'rlvr',
  shard: number,
  imageRecords: ReadonlyArray<{ image_sha256: string }>,
  prompts: RlvrPrompt[],
  summary: ExportSummary,
): Promise<void> {
  const images = await loadImages(store, layout, imageRecords);
  const bytes = (r: { image_sha256: string }) => images.get(r.image_sha256)!;
  const key = format === 'verl' ? layout.verl(shard) : layout.rlvr(shard);
  await store.put(key, await (format === 'verl' ? verlParquet(prompts, bytes, summary.rows) : rlvrParquet(prompts, bytes)));
  summary.files.push(key);
  summary.rows += prompts.length;
}

async function registerLlamaFactoryV1(store: ObjectStore, layout: BuildLayout, summary: ExportSummary): Promise<void> {
  const folder = (key: string) => key.slice(layout.root.length + 1, key.lastIndexOf('/'));
  for (const [split, name, key] of [
    ['sft', 'mmif_instruct', layout.llamafactoryV1Sft(0)],
    ['dpo', 'mmif_dpo', layout.llamafactoryV1Dpo(0)],
  ] as const) {
    await store.put(layout.llamafactoryV1Registration(split), llamaFactoryV1Registration(name, folder(key)));
    summary.files.push(layout.llamafactoryV1Registration(split));
  }
}

/** `--holdout` given for a build that reserved its split at build time (config `holdout`). */
export class ReservedSplitError extends PermanentError {
  override name = 'ReservedSplitError';
}

/** An eval split asked of a build that reserved none: drawn now, its samples would stay in the training files. */
export class NoReservedSplitError extends PermanentError {
  override name = 'NoReservedSplitError';
}

/** A format a multiturn build's chats cannot be written in. */
export class MultiturnExportError extends PermanentError {
  override name = 'MultiturnExportError';
}

/**
 * The eval split in MM-IFEval's input layout. Held-out splits are made only at build time (config
 * `holdout`): a build with one reserved it, its held-out records (heldout/) are out of every training
 * file and of the card's configs, and the export writes them as they are. A split drawn here instead
 * would leave its samples in the sharegpt and Parquet shards the card loads and in any TRL export, so
 * a user training on the dataset would train on the test set: it is refused, naming the build-time way.
 * `all` writes every accepted sample instead, to score the data itself with MM-IFEval's scripts (no
 * eval split: these samples are the training data, and the ids file says so).
 */
export async function exportMmifeval(store: ObjectStore, layout: BuildLayout, options: { fraction?: number; all?: boolean } = {}): Promise<ExportSummary> {
  const config = (await getJson<StoredConfig>(store, layout.config))?.config;
  if (config?.mode === 'multiturn') {
    // Its records are chats: MM-IFEval scores single-turn answers (multi-turn chats are `mmif eval --chats`).
    throw new MultiturnExportError(`build ${layout.root} is a multiturn build: --format mmifeval exports single-turn samples only`);
  }
  if (config?.holdout) {
    if (options.fraction !== undefined || options.all) {
      throw new ReservedSplitError(
        `build ${layout.root} reserved its eval split when it was built (holdout.fraction ${config.holdout.fraction}, drawn by image): the export writes that split; leave out --holdout and --all`,
      );
    }
    const summary = await writeReservedSplit(store, layout, { multiturn: false, seed: config.seed, fraction: config.holdout.fraction });
    if (summary.rows === 0) throw new Error(`build ${layout.root} held out no accepted sample (holdout.fraction ${config.holdout.fraction}); raise it and build again`);
    return summary;
  }
  if (!options.all) {
    const fraction = options.fraction ?? 0.05;
    throw new NoReservedSplitError(
      `build ${layout.root} reserved no eval split: one drawn at export time would leave its samples in the training files (sharegpt, Parquet, TRL) and the card's default config. ` +
        `Build a new version with "holdout": {"fraction": ${fraction}} ('mmif build --new-version'), whose held-out images are in no training file, or pass --all to write every sample to score the data itself`,
    );
  }
  const all: InstructRecord[] = [];
  for (const shard of await committedShards(store, layout)) all.push(...(await recordsOf<InstructRecord>(store, layout.instructJsonl(shard), instructRecordFromLine)));
  if (all.length === 0) throw new Error(`build ${layout.root} has no accepted SFT sample to write`);
  const files = await writeBench(store, layout, all, { seed: config?.seed ?? 0, fraction: 1, reservedByBuild: false, trainingData: true });
  return { format: 'mmifeval', files, rows: all.length };
}

/** How a build reserved its split (config `mode`, `seed`, `holdout.fraction`), as its caller already knows it. */
interface ReservedSplit {
  multiturn: boolean;
  seed: number;
  fraction: number;
}

/**
 * Writes the split a build reserved (config `holdout`) from its committed shards' heldout/ files;
 * the build's own training data already leaves those images out. Writes nothing when none was held
 * out (MM-IFEval's scripts crash on an empty file). Run by every build's finalize and by the export.
 */
export async function writeReservedSplit(store: ObjectStore, layout: BuildLayout, { multiturn, seed, fraction }: ReservedSplit): Promise<ExportSummary> {
  const heldOut: InstructRecord[] = [];
  const chats: ChatRecord[] = [];
  for (const shard of await committedShards(store, layout)) {
    const manifest = await getJson<ShardManifest>(store, layout.manifest(shard));
    if (!manifest?.heldOut) continue;
    if (multiturn) chats.push(...(await recordsOf<ChatRecord>(store, layout.heldOutJsonl(shard), (line) => JSON.parse(line) as ChatRecord)));
    else heldOut.push(...(await recordsOf<InstructRecord>(store, layout.heldOutJsonl(shard), instructRecordFromLine)));
  }
  if (multiturn) {
    if (chats.length === 0) return { format: 'mmifeval', files: [], rows: 0 };
    // The questions and image of each held-out chat: the eval gives them its own seeded instructions.
    await store.put(layout.mmifevalHoldoutChats, jsonl(chats.map((c) => JSON.stringify({ id: c.id, image: c.image_path, questions: c.turns.map((t) => t.question) }))));
    const images = [...new Set(chats.map((c) => c.image_sha256))].sort();
    await putJson(store, layout.mmifevalHoldoutIds, { seed, fraction, reservedByBuild: true, by: 'image', ids: chats.map((c) => c.id), images });
    return { format: 'mmifeval', files: [layout.mmifevalHoldoutChats, layout.mmifevalHoldoutIds], rows: chats.length };
  }
  if (heldOut.length === 0) return { format: 'mmifeval', files: [], rows: 0 };
  const files = await writeBench(store, layout, heldOut, { seed, fraction, reservedByBuild: true });
  return { format: 'mmifeval', files, rows: heldOut.length };
}

/** `MM-IFEval/mmif_holdout.jsonl` and its ids file (which samples and images, and how they were drawn). */
async function writeBench(
  store: ObjectStore,
  layout: BuildLayout,
  heldOut: InstructRecord[],
  draw: { seed: number; fraction: number; reservedByBuild: boolean; trainingData?: boolean },
): Promise<string[]> {
  const lines = mmifevalLines(heldOut);
  await store.put(layout.mmifevalBench, jsonl(lines.map((l) => JSON.stringify(l))));
  const images = [...new Set(heldOut.map((r) => r.image_sha256))].sort();
  await putJson(store, layout.mmifevalHoldoutIds, { ...draw, by: 'image', ids: heldOut.map((r) => r.id), images });
  return [layout.mmifevalBench, layout.mmifevalHoldoutIds];
}
