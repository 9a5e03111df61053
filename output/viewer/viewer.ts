/**
 * Writes a build's viewer (output/viewer/viewerPage.ts) from its committed shards: the records are read
 * shard by shard and handed to `put` a data file at a time, so a 46k-record build never holds more
 * than the index and one chunk of articles. Rejected samples and discarded pairs come from the
 * shards' rejects/ files, with what the resume state (_work/) keeps of them (instruction, constraints,
 * staged image; their answers are not kept); the summary panel is the caller's (output/reports/viewerSummary.ts).
 */
import { getCreatedJson, getJson, type ObjectStore } from '../../storage/objectStore.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import type { BuildReport } from '../contracts/buildReport.js';
import type { ShardManifest } from '../contracts/manifest.js';
import { dpoRecordFromLine, instructRecordFromLine } from '../formats/sharegpt.js';
import type { ChatPairSharegptRow, ChatSharegptRow } from '../formats/chatFormats.js';
import type { StoredConfig } from '../../pipeline/planning/planBuild.types.js';
import type { RejectRecord } from '../contracts/records.js';
import type { StageState } from '../../pipeline/run/stageState.js';
import { mapLimit } from '../../domain/mapLimit.js';
import { ViewerWriter, type FinishOptions, type RejectedContext, type ViewerFile, type ViewerPage } from './viewerPage.js';

interface ViewerOptions extends Omit<ViewerPage, 'buildId'>, Pick<FinishOptions, 'summary'> {
  /** Records shown of each kind (SFT records or chats, pairs); the rest are counted on the page. */
  limit?: number;
  put: (file: ViewerFile) => Promise<unknown>;
}

/** What the page shows; undefined when no shard is committed (nothing is written then). */
export interface ViewerSummary {
  multiturn: boolean;
  /** SFT records or chats shown, pairs (turn-level in a multiturn build) shown, rejected samples and pairs shown. */
  shown: { instruct: number; dpo: number; rejected: number };
}

export async function writeViewer(store: ObjectStore, layout: BuildLayout, options: ViewerOptions): Promise<ViewerSummary | undefined> {
  const shards: number[] = [];
  for await (const { key } of store.list(layout.manifestsPrefix)) {
    const manifest = await getJson<ShardManifest>(store, key);
    if (manifest) shards.push(manifest.shard);
  }
  if (shards.length === 0) return undefined;
  shards.sort((a, b) => a - b);
  const limit = options.limit ?? Infinity;
  const writer = new ViewerWriter({ ...options, buildId: layout.root });
  const lines = async (key: string) => ((await store.get(key)) ?? Buffer.alloc(0)).toString('utf8').split('\n').filter(Boolean);
  const omitted = { instruct: 0, dpo: 0, rejected: 0 };
  const shown = { instruct: 0, dpo: 0, rejected: 0 };
  let simulated = false;
  /** Every record of one kind, shard by shard, up to the limit; `prepare` reads what a shard's shown lines need. */
  const each = async <T>(kind: keyof typeof shown, keyOf: (shard: number) => string, add: (item: T) => ViewerFile | undefined, prepare: (lines: string[]) => Promise<T[]>) => {
    for (const shard of shards) {
      const all = await lines(keyOf(shard));
      const room = Math.max(0, Math.min(all.length, limit - shown[kind]));
      omitted[kind] += all.length - room;
      shown[kind] += room;
      for (const item of await prepare(all.slice(0, room))) {
        const full = add(item);
        if (full) await options.put(full);
      }
    }
  };
  const asLines = async (all: string[]) => all;
  const multiturn = (await getJson<StoredConfig>(store, layout.config))?.config.mode === 'multiturn';
  if (multiturn) {
    await each('instruct', layout.chatJsonl, (line: string) => writer.addChat(JSON.parse(line) as ChatSharegptRow), asLines);
    await each('dpo', layout.chatDpoJsonl, (line: string) => writer.addChatPair(JSON.parse(line) as ChatPairSharegptRow), asLines);
  } else {
    /** A single-turn record's line, parsed and added; a simulated one marks the page. */
    const record =
      <R extends { simulated: boolean }>(parse: (line: string) => R, add: (r: R) => ViewerFile | undefined) =>
      (line: string) => {
        const r = parse(line);
        simulated ||= r.simulated;
        return add(r);
      };
    await each(
      'instruct',
      layout.instructJsonl,
      record(instructRecordFromLine, (r) => writer.addSft(r)),
      asLines,
    );
    await each(
      'dpo',
      layout.dpoJsonl,
      record(dpoRecordFromLine, (r) => writer.addPair(r)),
      asLines,
    );
  }
  await each(
    'rejected',
    layout.rejects,
    ({ reject, kept }: { reject: RejectRecord; kept: RejectedContext }) => writer.addRejected(reject, kept),
    (all) => mapLimit(all, 16, async (line) => rejectedWithContext(store, layout, JSON.parse(line) as RejectRecord)),
  );
  const report = await getJson<BuildReport>(store, layout.report);
  for (const file of writer.finish({ simulated: report?.simulated ?? simulated, omitted, summary: options.summary })) await options.put(file);
  return { multiturn, shown };
}

/** A rejection with what the resume state keeps of its sample: the stages it passed. */
async function rejectedWithContext(store: ObjectStore, layout: BuildLayout, reject: RejectRecord): Promise<{ reject: RejectRecord; kept: RejectedContext }> {
  const passed = async <S extends 'image' | 'instruction' | 'constraints'>(stage: S) => {
    const state = await getCreatedJson<StageState<S>>(store, layout.stageState(reject.id, stage));
    return state?.status === 'ok' ? state.result : undefined;
  };
  const [image, instruction, constraints] = await Promise.all([passed('image'), passed('instruction'), passed('constraints')]);
  const kept: RejectedContext = {};
  if (image) kept.imagePath = layout.inDataset(layout.stagedImage(image.sha256));
  if (instruction) kept.instruction = instruction.instruction;
  if (constraints) kept.constraints = constraints.constraints;
  return { reject, kept };
}
