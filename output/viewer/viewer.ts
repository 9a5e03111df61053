/**
 * Writes a build's viewer (output/viewer/viewerPage.ts) from its committed shards: the records are read
 * shard by shard and handed to `put` a data file at a time, so a 46k-record build never holds more
 * than the index and one chunk of articles.
 */
import { getJson, type ObjectStore } from '../../storage/objectStore.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import type { BuildReport } from '../contracts/buildReport.js';
import type { ShardManifest } from '../contracts/manifest.js';
import { dpoRecordFromLine, instructRecordFromLine } from '../formats/sharegpt.js';
import type { ChatPairSharegptRow, ChatSharegptRow } from '../formats/chatFormats.js';
import type { StoredConfig } from '../../pipeline/planning/planBuild.types.js';
import { ViewerWriter, type ViewerFile, type ViewerPage } from './viewerPage.js';

export interface ViewerOptions extends Omit<ViewerPage, 'buildId'> {
  /** Records shown of each kind (SFT records or chats, pairs); the rest are counted on the page. */
  limit?: number;
  put: (file: ViewerFile) => Promise<unknown>;
}

/** What the page shows; undefined when no shard is committed (nothing is written then). */
export interface ViewerSummary {
  multiturn: boolean;
  /** SFT records or chats shown, pairs (turn-level in a multiturn build) shown. */
  shown: { instruct: number; dpo: number };
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
  const omitted = { instruct: 0, dpo: 0 };
  const shown = { instruct: 0, dpo: 0 };
  let simulated = false;
  /** Every record of one kind, shard by shard, up to the limit. */
  const each = async (kind: 'instruct' | 'dpo', keyOf: (shard: number) => string, add: (line: string) => ViewerFile | undefined) => {
    for (const shard of shards) {
      for (const line of await lines(keyOf(shard))) {
        if (shown[kind] >= limit) {
          omitted[kind] += 1;
          continue;
        }
        shown[kind] += 1;
        const full = add(line);
        if (full) await options.put(full);
      }
    }
  };
  const multiturn = (await getJson<StoredConfig>(store, layout.config))?.config.mode === 'multiturn';
  if (multiturn) {
    await each('instruct', layout.chatJsonl, (line) => writer.addChat(JSON.parse(line) as ChatSharegptRow));
    await each('dpo', layout.chatDpoJsonl, (line) => writer.addChatPair(JSON.parse(line) as ChatPairSharegptRow));
  } else {
    await each('instruct', layout.instructJsonl, (line) => {
      const r = instructRecordFromLine(line);
      simulated ||= r.simulated;
      return writer.addSft(r);
    });
    await each('dpo', layout.dpoJsonl, (line) => {
      const r = dpoRecordFromLine(line);
      simulated ||= r.simulated;
      return writer.addPair(r);
    });
  }
  const report = await getJson<BuildReport>(store, layout.report);
  for (const file of writer.finish({ simulated: report?.simulated ?? simulated, omitted })) await options.put(file);
  return { multiturn, shown };
}
