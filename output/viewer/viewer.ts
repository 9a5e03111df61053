/**
 * Writes a build's viewer (output/viewer/viewerPage.ts) from its committed shards: the records are read
 * shard by shard and handed to `put` a data file at a time, so a 46k-record build never holds more
 * than the index and one chunk of articles. Rejected samples and discarded pairs come from the
 * shards' rejects/ files, whose lines carry what each sample passed (instruction, constraints, staged
 * image; their answers are not kept): no stage state is read. The summary panel is the caller's
 * (output/reports/viewerSummary.ts).
 */
import { getJson, type ObjectStore } from '../../storage/objectStore.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import type { BuildReport } from '../contracts/buildReport.js';
import type { ShardManifest } from '../contracts/manifest.js';
import { dpoRecordFromLine, instructRecordFromLine } from '../formats/sharegpt.js';
import type { ChatPairSharegptRow, ChatSharegptRow } from '../formats/chatFormats.js';
import type { RejectRecord } from '../contracts/records.js';
import { ViewerWriter, type FinishOptions, type ViewerFile, type ViewerPage } from './viewerPage.js';

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
  const manifests: ShardManifest[] = [];
  for await (const { key } of store.list(layout.manifestsPrefix)) {
    const manifest = await getJson<ShardManifest>(store, key);
    if (manifest) manifests.push(manifest);
  }
  if (manifests.length === 0) return undefined;
  const shards = manifests.map((m) => m.shard).sort((a, b) => a - b);
  // A multiturn shard commits chats (output/commit/shardWriter.ts): the mode from the data, not from the resume state.
  const multiturn = manifests[0]!.files.some((f) => f.path === layout.inDataset(layout.chatJsonl(manifests[0]!.shard)));
  const limit = options.limit ?? Infinity;
  const writer = new ViewerWriter({ ...options, buildId: layout.root });
  const lines = async (key: string) => ((await store.get(key)) ?? Buffer.alloc(0)).toString('utf8').split('\n').filter(Boolean);
  const omitted = { instruct: 0, dpo: 0, rejected: 0 };
  const shown = { instruct: 0, dpo: 0, rejected: 0 };
  let simulated = false;
  /** Every line of one kind, shard by shard, up to the limit. */
  const each = async (kind: keyof typeof shown, keyOf: (shard: number) => string, add: (line: string) => ViewerFile | undefined) => {
    for (const shard of shards) {
      const all = await lines(keyOf(shard));
      const room = Math.max(0, Math.min(all.length, limit - shown[kind]));
      omitted[kind] += all.length - room;
      shown[kind] += room;
      for (const line of all.slice(0, room)) {
        const full = add(line);
        if (full) await options.put(full);
      }
    }
  };
  if (multiturn) {
    await each('instruct', layout.chatJsonl, (line) => writer.addChat(JSON.parse(line) as ChatSharegptRow));
    await each('dpo', layout.chatDpoJsonl, (line) => writer.addChatPair(JSON.parse(line) as ChatPairSharegptRow));
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
    );
    await each(
      'dpo',
      layout.dpoJsonl,
      record(dpoRecordFromLine, (r) => writer.addPair(r)),
    );
  }
  await each('rejected', layout.rejects, (line) => writer.addRejected(JSON.parse(line) as RejectRecord));
  const report = await getJson<BuildReport>(store, layout.report);
  for (const file of writer.finish({ simulated: report?.simulated ?? simulated, omitted, summary: options.summary })) await options.put(file);
  return { multiturn, shown };
}
