/**
 * Commits a shard: assembles every sample's records from its stage states, writes the data files
 * under deterministic keys, then the manifest last. A shard whose manifest exists is committed and
 * is not rewritten, except deliberately: a re-run that regenerated its model-call rejections commits
 * it again as the next revision (`replacesRevision`). A crash before the manifest leaves files that
 * the retry overwrites with the same bytes; a crash in a re-commit leaves the `revising` mark on the
 * standing manifest, which makes the next run re-open the shard and finish it.
 */
import { assembleSample, passedStages, rejectRecord, type TrainingPromptSettings } from './records.js';
import type { DpoRecord, InstructRecord, RejectRecord, SampleStates } from '../contracts/records.js';
import type { SourceSample } from '../../domain/sample.js';
import { sha256Hex } from '../../domain/hashing.js';
import { mapLimit } from '../../domain/mapLimit.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { stagesFor, type StageName } from '../../config/stages.js';
import { type StageState } from '../../pipeline/run/stageState.js';
import { getCreatedJson, getJson, putJson, type ObjectStore } from '../../storage/objectStore.js';
import { storedBody } from '../../storage/maskingStore.js';
import { checkShardBudget, type ErrorBudget } from '../../pipeline/run/errorBudget.js';
import { claimHolder, duplicateReason } from '../../pipeline/stages/image/imageClaims.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import { countByReason, countByStage, modelsByStage, pairStats, summarizeUsage, unpricedUsage, verificationStats } from './manifest.js';
import { MANIFEST_FORMAT, type ManifestFile, type ShardManifest } from '../contracts/manifest.js';
import type { Goals } from '../../domain/targets.js';
import { trimToCaps } from './overTarget.js';
import { recordCommit } from '../../telemetry/metrics.js';
import { reserveHeldOut, splitHeldOutChats, type HoldoutSettings } from './heldOut.js';
import { chatQuality, shardQuality, visionTallies } from './qualityStats.js';
import type { ShardQuality } from '../contracts/quality.js';
import { dpoParquet, instructParquet } from '../formats/parquet.js';
import { dpoSharegptLine, instructSharegptLine, jsonl } from '../formats/sharegpt.js';
import { assembleChat } from './chatRecords.js';
import { loadImages } from '../formats/images.js';
import { CHAT_PAIR_ROWS, CHAT_ROWS, chatPairSharegptLine, chatParquet, chatSharegptLine } from '../formats/chatFormats.js';

export interface ShardToCommit {
  buildId: string;
  shard: number;
  configFingerprint: string;
  samples: readonly SourceSample[];
  training: TrainingPromptSettings;
  /** Fails the commit when too many samples were rejected by model-call errors (errorBudget.ts). */
  errorBudget?: ErrorBudget;
  /** The build's held-out split (config `holdout`): samples whose image is drawn stay out of the training files. */
  holdout?: HoldoutSettings;
  /** With targets: accepted records of each kind this shard may keep (its source's remaining target). */
  caps?: Goals;
  /** A multiturn build's shard: chat records and turn-level pairs instead of single-turn ones. */
  multiturn?: boolean;
  /**
   * Commit again a shard committed at this revision (re-opened for its model-call rejections). A
   * manifest at another revision is returned as it is: a retried re-commit writes nothing twice.
   */
  replacesRevision?: number;
}

export async function writeShard(store: ObjectStore, layout: BuildLayout, spec: ShardToCommit): Promise<ShardManifest> {
  const existing = await getJson<ShardManifest>(store, layout.manifest(spec.shard));
  if (existing && existing.revision !== spec.replacesRevision) return existing;
  const started = performance.now();

  // The states of the build's own stages: a single-turn build has no chat state to look for (ADR 0080).
  const stages = stagesFor(spec.multiturn ? 'multiturn' : 'single');
  const loaded = await mapLimit(spec.samples, 16, async (sample) => ({ sample, states: await loadStates(store, layout, sample, stages) }));
  const content = spec.multiturn ? await chatShardContent(store, layout, spec, loaded) : await singleTurnShardContent(store, layout, spec, loaded);
  const { files, rejects } = content;
  // Replies that came through the Batch API were paid when collected; the stages read them as cache hits.
  const calls: CallRecord[] = [...content.calls, ...(await batchCalls(store, layout, spec.shard))];
  // Marked before any data file changes, so a crash from here on is repaired by the next run.
  if (existing && existing.revising === undefined) await putJson(store, layout.manifest(spec.shard), { ...existing, revising: existing.revision + 1 });
  const manifestFiles: ManifestFile[] = [];
  for (const file of files) {
    await store.put(file.key, file.body);
    // The manifest describes the file as stored: the store masked any secret in its text.
    const stored = storedBody(file.body);
    const bytes = typeof stored === 'string' ? Buffer.from(stored) : stored;
    manifestFiles.push({ path: layout.inDataset(file.key), sha256: sha256Hex(bytes), bytes: bytes.length, rows: file.rows });
  }

  const sampleRejects = rejects.filter((r) => r.kind === 'sample');
  const manifest: ShardManifest = {
    format: MANIFEST_FORMAT,
    buildId: spec.buildId,
    shard: spec.shard,
    configFingerprint: spec.configFingerprint,
    simulated: calls.some((c) => c.simulated),
    counts: {
      planned: spec.samples.length,
      instruct: content.instruct,
      dpo: content.dpo,
      rejectedSamples: sampleRejects.length,
      rejectedPairs: rejects.filter((r: RejectRecord) => r.kind === 'pair').length,
    },
    rejectsByStage: countByStage(rejects),
    rejectsByReason: countByReason(rejects),
    rejectedSamplesByReason: countByReason(sampleRejects),
    files: manifestFiles,
    models: modelsByStage(calls),
    usage: summarizeUsage(calls),
    ...unpricedOf(calls),
    verification: content.verification,
    ...richnessOf(spec.samples),
    pairs: content.pairs,
    quality: content.quality,
    ...(spec.caps ? { targetCaps: spec.caps } : {}),
    modelCallRejects: rejects.filter((r) => r.model_call).length,
    revision: existing ? existing.revision + 1 : 1,
    ...(content.heldOut ? { heldOut: content.heldOut } : {}),
  };
  if (existing) {
    // A deliberate overwrite of the revision it replaces (checked above); it clears the `revising` mark.
    await putJson(store, layout.manifest(spec.shard), manifest);
    recordShardCommit(manifest, existing, started);
    return manifest;
  }
  // The commit point. A conditional write: if a racing attempt committed first, its manifest (the
  // same bytes, as every input is deterministic) stands.
  if (await store.putIfAbsent(layout.manifest(spec.shard), JSON.stringify(manifest), 'application/json')) recordShardCommit(manifest, undefined, started);
  return manifest;
}

/** A commit in the metrics: the records and pairs it added to those of the revision it replaces. */
function recordShardCommit(manifest: ShardManifest, replaced: ShardManifest | undefined, started: number): void {
  const added = { instruct: manifest.counts.instruct - (replaced?.counts.instruct ?? 0), dpo: manifest.counts.dpo - (replaced?.counts.dpo ?? 0) };
  const bytes = manifest.files.reduce((n, f) => n + f.bytes, 0);
  recordCommit(manifest.buildId, added, bytes, (performance.now() - started) / 1000);
}

function unpricedOf(calls: readonly CallRecord[]): Pick<ShardManifest, 'unpriced'> {
  const unpriced = unpricedUsage(calls);
  return unpriced ? { unpriced } : {};
}

type LoadedSample = { sample: SourceSample; states: SampleStates };
type ShardFile = { key: string; body: Buffer | string; rows: number };

/** What a shard commits: its files, counts and the manifest's statistics. */
interface ShardContent {
  files: ShardFile[];
  /** SFT records (single-turn samples or chats) and preference pairs written. */
  instruct: number;
  dpo: number;
  rejects: RejectRecord[];
  calls: CallRecord[];
  verification: ShardManifest['verification'];
  pairs: ShardManifest['pairs'];
  quality: ShardManifest['quality'];
  heldOut?: ShardManifest['heldOut'];
}

async function singleTurnShardContent(store: ObjectStore, layout: BuildLayout, spec: ShardToCommit, loaded: readonly LoadedSample[]): Promise<ShardContent> {
  const assembled = await mapLimit(loaded, 16, async ({ sample, states }) => {
    const sampleRecords = assembleSample(sample, states, spec.training);
    const lostTo = await claimLostTo(store, layout, sample, states);
    return lostTo ? { passed: sampleRecords.passed, calls: sampleRecords.calls, reject: lostTo } : sampleRecords;
  });
  checkBudget(
    spec,
    assembled.flatMap((a) => (a.reject ? [a.reject] : [])),
  );
  // Held out before the caps: targets count training records.
  const heldOut = spec.holdout ? reserveHeldOut(assembled, spec.holdout) : undefined;
  const overTarget = spec.caps ? trimToCaps(assembled, spec.caps) : [];
  const instruct = assembled.flatMap((a) => (a.instruct ? [a.instruct] : []));
  const dpo = assembled.flatMap((a) => (a.dpo ? [a.dpo] : []));
  const rejects = [...assembled.flatMap((a) => (a.reject ? [a.reject] : [])), ...overTarget];
  const images = await loadImages(store, layout, [...instruct, ...(heldOut?.instruct ?? [])]);
  await publishImages(store, layout, images);
  const imageBytes = (r: InstructRecord | DpoRecord) => images.get(r.image_sha256)!;
  const files: ShardFile[] = [
    { key: layout.instructParquet(spec.shard), body: await instructParquet(instruct, imageBytes), rows: instruct.length },
    { key: layout.instructJsonl(spec.shard), body: jsonl(instruct.map(instructSharegptLine)), rows: instruct.length },
    { key: layout.dpoParquet(spec.shard), body: await dpoParquet(dpo, imageBytes), rows: dpo.length },
    { key: layout.dpoJsonl(spec.shard), body: jsonl(dpo.map(dpoSharegptLine)), rows: dpo.length },
    { key: layout.rejects(spec.shard), body: jsonl(rejects.map((r) => JSON.stringify(r))), rows: rejects.length },
    ...(heldOut ? [{ key: layout.heldOutJsonl(spec.shard), body: jsonl(heldOut.instruct.map(instructSharegptLine)), rows: heldOut.instruct.length }] : []),
  ];
  return {
    files,
    instruct: instruct.length,
    dpo: dpo.length,
    rejects,
    calls: assembled.flatMap((a) => a.calls),
    verification: verificationStats(instruct.map((r) => ({ attempts: r.answer_attempts, verdicts: r.verdicts }))),
    pairs: pairStats(assembled),
    quality: withVision(
      shardQuality(
        loaded.map((l) => l.states),
        { instruct, dpo, rejects },
      ),
      visionTallies(loaded.map((l) => ({ source: l.sample.source, states: l.states }))),
    ),
    ...(heldOut ? { heldOut: { instruct: heldOut.instruct.length, dpo: heldOut.dpo } } : {}),
  };
}

/** A multiturn shard: chats and turn-level pairs (output/commit/chatRecords.ts) in the chat/ and chat-dpo/ folders. */
async function chatShardContent(store: ObjectStore, layout: BuildLayout, spec: ShardToCommit, loaded: readonly LoadedSample[]): Promise<ShardContent> {
  const assembled = await mapLimit(loaded, 16, async ({ sample, states }) => {
    const chat = assembleChat(sample, states);
    const lostTo = await claimLostTo(store, layout, sample, states);
    return lostTo ? { pairs: [], rejects: [lostTo], calls: chat.calls } : chat;
  });
  const rejects = assembled.flatMap((a) => a.rejects);
  checkBudget(spec, rejects);
  const built = assembled.flatMap((a) => (a.chat ? [a.chat] : []));
  const builtPairs = assembled.flatMap((a) => a.pairs);
  const split = spec.holdout ? splitHeldOutChats(built, builtPairs, spec.holdout) : undefined;
  const [chats, pairs] = split ? [split.chats, split.pairs] : [built, builtPairs];
  const images = await loadImages(store, layout, [...chats, ...(split?.heldOut ?? [])]);
  await publishImages(store, layout, images);
  const imageBytes = (r: { image_sha256: string }) => images.get(r.image_sha256)!;
  const files: ShardFile[] = [
    { key: layout.chatParquet(spec.shard), body: await chatParquet(CHAT_ROWS, chats, imageBytes), rows: chats.length },
    { key: layout.chatJsonl(spec.shard), body: jsonl(chats.map(chatSharegptLine)), rows: chats.length },
    { key: layout.chatDpoParquet(spec.shard), body: await chatParquet(CHAT_PAIR_ROWS, pairs, imageBytes), rows: pairs.length },
    { key: layout.chatDpoJsonl(spec.shard), body: jsonl(pairs.map(chatPairSharegptLine)), rows: pairs.length },
    { key: layout.rejects(spec.shard), body: jsonl(rejects.map((r) => JSON.stringify(r))), rows: rejects.length },
    // Whole chat records: the eval reads their image and questions (output/formats/export.ts writeReservedSplit).
    ...(split ? [{ key: layout.heldOutJsonl(spec.shard), body: jsonl(split.heldOut.map((c) => JSON.stringify(c))), rows: split.heldOut.length }] : []),
  ];
  return {
    files,
    ...(split ? { heldOut: { instruct: split.heldOut.length, dpo: split.droppedPairs } } : {}),
    instruct: chats.length,
    dpo: pairs.length,
    rejects,
    calls: assembled.flatMap((a) => a.calls),
    verification: verificationStats(chats.flatMap((c) => c.turns)),
    pairs: { byStrategy: {}, byConstraintType: {} },
    quality: chatQuality(chats, pairs, rejects),
  };
}

/** A shard's quality stats with its vision-dependence tallies, when the build checked any. */
const withVision = (quality: ShardQuality, vision: ShardQuality['visionDependence']): ShardQuality => (vision ? { ...quality, visionDependence: vision } : quality);

/** Fails the commit when too many samples were rejected by model-call errors (errorBudget.ts). */
function checkBudget(spec: ShardToCommit, rejects: readonly RejectRecord[]): void {
  const modelFaults = rejects.flatMap((r) => (r.model_call ? [r.model_call] : []));
  if (spec.errorBudget) checkShardBudget(spec.shard, spec.samples.length, modelFaults, spec.errorBudget);
}

/** Richness scores and tag counts of the shard's planned images, when planning selected them by richness. */
function richnessOf(samples: readonly SourceSample[]): Pick<ShardManifest, 'richness'> {
  const scored = samples.flatMap((s) => (s.richness ? [s.richness] : []));
  if (scored.length === 0) return {};
  return { richness: { scorer: scored[0]!.scorer, scores: scored.map((r) => r.score), tags: scored.flatMap((r) => (r.tags === undefined ? [] : [r.tags])) } };
}

async function batchCalls(store: ObjectStore, layout: BuildLayout, shard: number): Promise<CallRecord[]> {
  const calls: CallRecord[] = [];
  for await (const { key } of store.list(layout.batchCallsPrefix(shard))) {
    if (key.endsWith('.calls.json')) calls.push(...((await getJson<CallRecord[]>(store, key)) ?? []));
  }
  return calls;
}

/**
 * The duplicate rejection of a sample whose dedupe claim a lower rank took over after its image
 * stage passed (pipeline/stages/image/imageClaims.ts), else undefined.
 */
async function claimLostTo(store: ObjectStore, layout: BuildLayout, sample: SourceSample, states: SampleStates): Promise<RejectRecord | undefined> {
  const image = states.image;
  const claim = image?.status === 'ok' ? image.result.claim : undefined;
  if (!claim) return undefined;
  const holder = await claimHolder(store, layout.imageClaim(claim.key));
  if (!holder || holder.sampleId === sample.sampleId) return undefined;
  return rejectRecord(sample, passedStages(states), 'sample', 'image', duplicateReason(claim.policy, holder.sampleId));
}

async function loadStates(store: ObjectStore, layout: BuildLayout, sample: SourceSample, stages: readonly StageName[]): Promise<SampleStates> {
  const states: Record<string, StageState> = {};
  for (const stage of stages) {
    const state = await getCreatedJson<StageState>(store, layout.stageState(sample.sampleId, stage));
    if (state) states[stage] = state;
  }
  return states as SampleStates;
}

/**
 * Writes the images of the records a shard commits (training and held-out ones) into images/, the
 * folder records point at and that is uploaded; images of rejected samples stay staged (_work/).
 * Before the manifest: a crash leaves images whose records a retried commit writes again.
 */
async function publishImages(store: ObjectStore, layout: BuildLayout, images: ReadonlyMap<string, Buffer>): Promise<void> {
  await mapLimit([...images], 16, async ([sha, bytes]) => {
    await store.putIfAbsent(layout.image(sha), bytes, 'image/jpeg');
  });
}
