/**
 * Re-committing a re-opened shard (output/commit/shardWriter.ts): the manifest counts the model-call
 * rejections that make a re-run re-open the shard; the re-commit rewrites the data files under the
 * same keys and the manifest last as the next revision; a crash in the middle leaves the `revising`
 * mark, which re-opens the shard even with llm.rerunModelCallRejects off, and the next re-commit
 * repairs it; a retried re-commit of a revision already replaced writes nothing.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import sharp from 'sharp';
import { sha256Hex } from '../../domain/hashing.js';
import type { SourceSample } from '../../domain/sample.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { reopensOnRerun } from '../../output/commit/manifest.js';
import type { ShardManifest } from '../../output/contracts/manifest.js';
import { writeShard, type ShardToCommit } from '../../output/commit/shardWriter.js';
import type { StageName } from '../../config/stages.js';
import type { StageResults, StageState } from '../../pipeline/run/stageState.js';
import { getJson, putJson, type ObjectStore } from '../../storage/objectStore.js';
import { LocalStore } from '../../storage/localStore.js';
import { ReadCounts } from '../harness/readCounts.js';
import { assertCommittedShardsIntact } from '../harness/datasetChecks.js';

const layout = buildLayout('revisions');
let dir: string;
let store: LocalStore;
let imageSha: string;

const sample = (n: number): SourceSample => ({
  sampleId: `cc3m-${n}`,
  source: 'cc3m',
  sourceId: String(n),
  licenseNote: 'CC3M terms',
  image: { sourceIndex: 0, locator: { path: `${n}.jpg` } },
});
const samples = [sample(1), sample(2)];
const spec = (extra: Partial<ShardToCommit> = {}): ShardToCommit => ({
  buildId: 'revisions',
  shard: 0,
  configFingerprint: 'fp',
  samples,
  training: { template: 'inline', seed: 0 },
  ...extra,
});

function ok<S extends StageName>(stage: S, result: StageResults[S]): StageState<S> {
  return { status: 'ok', stage, result, calls: [] } as StageState<S>;
}

/** A sample through every stage, accepted with its pair. */
async function accept(s: SourceSample): Promise<void> {
  const instruction = `Describe picture ${s.sourceId}.`;
  const answer = { prompt: instruction, answer: `Picture ${s.sourceId} shows a harbor.`, model: 'vlm', verdicts: [], passRate: 1, attempts: 1 };
  const states: StageState[] = [
    ok('image', { sha256: imageSha, origin: { file: 'a.jpg' }, width: 8, height: 8, originalWidth: 8, originalHeight: 8 }),
    ok('instruction', { instruction, origin: 'generated', candidates: [instruction], examples: [] }),
    ok('constraints', { instructionKind: 'open', offeredTypes: [], proposed: [], constraints: [], removed: [], trimmed: [] }),
    ok('answer', answer),
    ok('rejected', { ...answer, answer: 'A picture.', model: 'weak', strategy: 'drop33', kept: [], dropped: [], atStake: [], validation: 'strict', ruleRejections: {} }),
  ];
  for (const state of states) await putJson(store, layout.stageState(s.sampleId, state.stage), state);
}

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-revisions-'));
  store = new LocalStore(dir);
  const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#336699' } })
    .jpeg()
    .toBuffer();
  imageSha = sha256Hex(jpeg);
  await store.put(layout.image(imageSha), jpeg);
  await accept(samples[0]!);
  // The second sample's instruction call gave unusable replies: rejected for the model call, not final.
  await putJson(
    store,
    layout.stageState('cc3m-2', 'image'),
    ok('image', { sha256: imageSha, origin: { file: 'a.jpg' }, width: 8, height: 8, originalWidth: 8, originalHeight: 8 }),
  );
  const modelCall = { endpoint: 'http://sim/v1', model: 'sim', status: 200, excerpt: 'empty-reply: the reply was empty' };
  await putJson(store, layout.stageState('cc3m-2', 'instruction'), {
    status: 'rejected',
    stage: 'instruction',
    reason: 'instruction: empty-reply: x (3 tries)',
    calls: [],
    details: { modelCall },
  });
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The store, except that writing `failingKey` throws (a worker dying mid-commit). */
function crashingOn(failingKey: string): ObjectStore {
  const inner: ObjectStore = store;
  return {
    root: store.root,
    get: (key) => store.get(key),
    getRange: (key, start, end) => store.getRange(key, start, end),
    openRead: (key) => store.openRead(key),
    put: async (key, body, type) => {
      if (key === failingKey) throw new Error('worker killed');
      await inner.put(key, body, type);
    },
    create: (key, body, type) => inner.create(key, body, type),
    putIfAbsent: (key, body, type) => inner.putIfAbsent(key, body, type),
    exists: (key) => store.exists(key),
    appendLine: (key, line) => store.appendLine(key, line),
    readLines: (key) => store.readLines(key),
    list: (prefix) => store.list(prefix),
    delete: (key) => store.delete(key),
    sweepIncompleteWrites: (prefix) => store.sweepIncompleteWrites(prefix),
  };
}

test('a shard with a model-call rejection is committed as revision 1 counting it, and re-committed as revision 2 after a crash mid-rewrite', async () => {
  const first = await writeShard(store, layout, spec());
  assert.deepEqual([first.revision, first.modelCallRejects, first.counts.instruct, first.counts.rejectedSamples], [1, 1, 1, 1]);
  assert.equal(reopensOnRerun(first, true), true);
  assert.equal(reopensOnRerun(first, false), false, 'with llm.rerunModelCallRejects off it stays as it is');
  assert.deepEqual(await writeShard(store, layout, spec()), first, 'a plain commit never overwrites');

  // The re-run regenerated the sample; the re-commit dies after the instruct files, before the DPO ones.
  await accept(samples[1]!);
  await assert.rejects(writeShard(crashingOn(layout.dpoJsonl(0)), layout, spec({ replacesRevision: 1 })), /worker killed/);
  const interrupted = (await getJson<ShardManifest>(store, layout.manifest(0)))!;
  assert.deepEqual({ ...interrupted, revising: undefined }, { ...first, revising: undefined }, 'the standing manifest is revision 1');
  assert.equal(interrupted.revising, 2);
  assert.equal(reopensOnRerun(interrupted, false), true, 'an interrupted re-commit re-opens whatever the config says');
  assert.equal((await store.get(layout.instructJsonl(0)))!.toString().trim().split('\n').length, 2, 'files newer than the manifest');

  const second = await writeShard(store, layout, spec({ replacesRevision: 1 }));
  assert.deepEqual(
    [second.revision, second.modelCallRejects, second.revising, second.counts.instruct, second.counts.dpo, second.counts.rejectedSamples],
    [2, 0, undefined, 2, 2, 0],
  );
  assert.deepEqual(await getJson<ShardManifest>(store, layout.manifest(0)), second);
  await assertCommittedShardsIntact(store, 'revisions', 1);
  assert.equal(reopensOnRerun(second, true), false, 'nothing left to regenerate');

  // A retried activity of the same re-commit finds revision 2 and writes nothing.
  const untouchable = crashingOn(layout.manifest(0));
  const retried = await writeShard({ ...untouchable, put: () => Promise.reject(new Error('nothing may be written')) }, layout, spec({ replacesRevision: 1 }));
  assert.deepEqual(retried, second);
});

test("a single-turn commit reads each sample's state of each single-turn stage once, and looks for no chat state", async () => {
  const counted = new ReadCounts(dir);
  await writeShard(counted, layout, spec({ shard: 7 }));
  const stateReads = [...counted.reads].filter(([key]) => key.includes('/_work/samples/'));
  const read = (stage: string) => stateReads.filter(([key]) => key.endsWith(`/${stage}.json`)).map(([, n]) => n);
  for (const stage of ['image', 'instruction', 'constraints', 'answer', 'rejected']) assert.deepEqual(read(stage), [1, 1], `${stage}: once per sample`);
  assert.deepEqual(read('chat'), [], 'no chat state looked for');
});
