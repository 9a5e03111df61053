/**
 * What `mmif reward serve --data ROOT` scores against: every committed record of the build at ROOT
 * (SFT records, DPO pairs and held-out records; a multiturn build's chats, held-out ones included, as
 * one ground truth per turn with an instruction in force, by `<chat id>#turn-<n>`) by id, each with its ground truth under the build's
 * `verification.vacuous`, and the images the judges see, read from the dataset root by the path a
 * ground truth names (only content-addressed image paths: no other object of the store is read).
 */
import { sha256Hex } from '../../domain/hashing.js';
import { chatTurnTruths, groundTruthOf, type GroundTruth } from '../../domain/groundTruth.js';
import type { ChatRecord } from '../contracts/records.js';
import { chatConversationFromLine } from './chatFormats.js';
import type { VacuousPolicy } from '../../domain/verdict.js';
import type { StoredConfig } from '../../pipeline/planning/planBuild.types.js';
import type { SampleImage } from '../../pipeline/run/sampleImage.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import { getJson, type ObjectStore } from '../../storage/objectStore.js';
import { committedShards, recordsOf } from './export.js';
import { dpoRecordFromLine, instructRecordFromLine } from './sharegpt.js';

export interface RewardData {
  /** Ground truths by record id. */
  truths: ReadonlyMap<string, GroundTruth>;
  vacuous: VacuousPolicy;
  /** The build's stored config (its llm settings and judge endpoint). */
  stored: StoredConfig | undefined;
  image: (path: string) => Promise<SampleImage>;
}

const IMAGE_PATH = /^images\/[0-9a-f]{2}\/[0-9a-f]{64}\.jpg$/;

export async function loadRewardData(store: ObjectStore, layout: BuildLayout): Promise<RewardData> {
  const stored = await getJson<StoredConfig>(store, layout.config);
  const vacuous = stored?.config.verification.vacuous ?? 'fail';
  const truths = new Map<string, GroundTruth>();
  for (const shard of await committedShards(store, layout)) {
    const manifest = await getJson<{ heldOut?: unknown }>(store, layout.manifest(shard));
    if (stored?.config.mode === 'multiturn') {
      const chats: Array<Parameters<typeof chatTurnTruths>[0]> = [
        ...(await recordsOf(store, layout.chatJsonl(shard), chatConversationFromLine)),
        ...(manifest?.heldOut ? await recordsOf(store, layout.heldOutJsonl(shard), (line) => JSON.parse(line) as ChatRecord) : []),
      ];
      for (const { truth } of chats.flatMap((c) => chatTurnTruths(c, vacuous))) truths.set(truth.id, truth);
      continue;
    }
    const records = [
      ...(await recordsOf(store, layout.instructJsonl(shard), instructRecordFromLine)),
      ...(await recordsOf(store, layout.dpoJsonl(shard), dpoRecordFromLine)),
      ...(manifest?.heldOut ? await recordsOf(store, layout.heldOutJsonl(shard), instructRecordFromLine) : []),
    ];
    for (const r of records) truths.set(r.id, groundTruthOf(r, vacuous));
  }
  const image = async (path: string): Promise<SampleImage> => {
    if (!IMAGE_PATH.test(path)) throw new Error(`image ${path} is not an image path of a dataset (images/xx/<sha256>.jpg)`);
    const jpeg = await store.get(`${layout.root}/${path}`);
    if (!jpeg) throw new Error(`image ${path} is missing from ${store.root}/${layout.root}`);
    return { jpeg, sha256: sha256Hex(jpeg) };
  };
  return { truths, vacuous, stored, image };
}
