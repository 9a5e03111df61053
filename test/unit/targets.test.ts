/** Targets counted in accepted records (domain/targets.ts), commit order (domain/commitOrder.ts), trimming (output/commit/overTarget.ts) and top-up rounds (pipeline/planning/topUp.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import { sampleIdFor } from '../../domain/hashing.js';
import type { SourceSample } from '../../domain/sample.js';
import { capsToRecommit, capsWhenDue } from '../../domain/commitOrder.js';
import { commitCaps, firstRoundSizes, forecastBasis, nextRound, outstandingSamples, sourceGoals, startOrder, type SourceTally } from '../../domain/targets.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { trimToCaps } from '../../output/commit/overTarget.js';
import type { AssembledSample, DpoRecord, InstructRecord } from '../../output/contracts/records.js';
import { makeBuildPlan } from '../../pipeline/planning/planBuild.js';
import { makeTopUpPlan } from '../../pipeline/planning/topUp.js';
import type { BuildPlan } from '../../pipeline/planning/planBuild.types.js';
import { inSegments, type SourceItem, type SourceReader } from '../../sources/contract.js';
import { getJson } from '../../storage/objectStore.js';
import { LocalStore } from '../../storage/localStore.js';

const config = (over: Partial<BuildConfigInput> = {}) =>
  parseBuildConfig({
    buildId: 'targets',
    output: '/unused',
    sources: [{ type: 'cc3m', uri: '/a' }],
    maxSamples: 1000,
    shardSize: 4,
    targets: { instruct: 10, dpo: 6 },
    models: { default: { model: 'm' } },
    ...over,
  });

const tally = (planned: number, instruct: number, dpo: number, exhausted = false): SourceTally => ({ planned, instruct, dpo, exhausted });

test('targets are split over sources by weight, a source may set its own, and a kind left out is not targeted', () => {
  const c = config({
    targets: { instruct: 100 },
    sources: [
      { type: 'cc3m', uri: '/a', weight: 3 },
      { type: 'cc3m', uri: '/b', weight: 1 },
      { type: 'cc3m', uri: '/c', targets: { instruct: 20, dpo: 5 } },
    ],
  });
  assert.deepEqual(sourceGoals(c), [{ instruct: 60 }, { instruct: 20 }, { instruct: 20, dpo: 5 }]);
});

test('targets refuse quotas, and source targets need build targets', () => {
  assert.throws(() => config({ sources: [{ type: 'cc3m', uri: '/a', quota: 4 }] }), /sources\.0\.quota: with targets/);
  assert.throws(() => config({ targets: undefined, sources: [{ type: 'cc3m', uri: '/a', targets: { dpo: 3 } }] }), /sources\.0\.targets: source targets need/);
  assert.throws(() => config({ targets: {} as never }), /targets: set instruct, dpo or both/);
});

test('round sizes: the first over-provisions by the expected yield, later ones meet the deficit with 95% confidence at the measured yield', () => {
  const c = config({ targets: { instruct: 10, dpo: 6, expectedYield: 0.5 } });
  assert.deepEqual(firstRoundSizes(c), [20]);
  // 20 planned, 8 SFT (yield 0.4) and 3 pairs (0.15) kept: 3 more pairs are 20 samples at that yield,
  // but 3 of 20 measures it too loosely for a 95% bound: twice that (domain/yieldBound.ts).
  assert.deepEqual(nextRound(c, 1, [tally(20, 8, 3)]), { sizes: [40] });
  // 80 of 200 kept: 20 more SFT records are 50 samples at yield 0.4, 70 to be 95% sure.
  const hundred = config({ targets: { instruct: 100, expectedYield: 0.5 } });
  assert.deepEqual(nextRound(hundred, 1, [tally(200, 80, 0)]), { sizes: [70] });
  // The 5% risk is split over the sources that owe: two owing the same plan 97.5% each.
  const two = config({
    targets: { instruct: 200, expectedYield: 0.5 },
    sources: [
      { type: 'cc3m', uri: '/a' },
      { type: 'cc3m', uri: '/b' },
    ],
  });
  assert.deepEqual(nextRound(two, 1, [tally(200, 80, 0), tally(200, 100, 0)]), { sizes: [70, 0] });
  assert.deepEqual(nextRound(two, 1, [tally(200, 80, 0), tally(200, 80, 0)]), { sizes: [74, 74] });
  // Nothing kept: double what was planned.
  assert.deepEqual(nextRound(c, 1, [tally(20, 0, 0)]), { sizes: [40] });
  assert.deepEqual(nextRound(c, 1, [tally(20, 10, 6)]), { outcome: 'targets-met' });
  assert.deepEqual(nextRound(c, 1, [tally(20, 8, 3, true)]), { outcome: 'sources-exhausted' });
  assert.deepEqual(nextRound(c, 8, [tally(20, 8, 3)]), { outcome: 'round-limit' });
  assert.deepEqual(nextRound(config({ maxSamples: 20 }), 1, [tally(20, 8, 3)]), { outcome: 'sample-limit' });
  assert.deepEqual(nextRound(config({ maxSamples: 30 }), 1, [tally(20, 8, 3)]), { sizes: [10] }, 'maxSamples caps the samples of all rounds');
});

test('a shard keeps only what its source still owes, the lowest-ranked first, and lists the rest as over-target', () => {
  assert.deepEqual(commitCaps({ instruct: 10, dpo: 6 }, { instruct: 8, dpo: 6 }), { instruct: 2, dpo: 0 });
  assert.deepEqual(commitCaps({ dpo: 6 }, { instruct: 80, dpo: 1 }), { dpo: 5 });
  const record = (id: string) => ({ id, source: 'cc3m', source_id: id }) as InstructRecord;
  const pair = (id: string) => ({ id: `${id}-dpo`, sample_id: id, source: 'cc3m', source_id: id, strategy: 'drop33' }) as DpoRecord;
  const passed = (id: string) => ({
    staged_image_path: `_work/images/${id}.jpg`,
    instruction: `Describe ${id}.`,
    constraints: [{ type: 'length', value: 'Two lines.', method: 'rule' as const }],
  });
  const assembled: AssembledSample[] = ['a', 'b', 'c', 'd'].map((id) => ({ instruct: record(id), ...(id !== 'b' ? { dpo: pair(id) } : {}), passed: passed(id), calls: [] }));
  const trimmed = trimToCaps(assembled, { instruct: 2, dpo: 1 });
  assert.deepEqual(
    assembled.map((a) => [a.instruct?.id ?? null, a.dpo?.sample_id ?? null]),
    [
      ['a', 'a'],
      ['b', null],
      [null, null],
      [null, null],
    ],
  );
  assert.deepEqual(
    trimmed.map((r) => [r.id, r.kind]),
    [
      ['c', 'sample'],
      ['c', 'pair'],
      ['d', 'sample'],
      ['d', 'pair'],
    ],
  );
  assert.ok(trimmed.every((r) => r.reason.startsWith('over-target: ')));
  // A trimmed record's line carries what its sample passed, as any rejection does.
  assert.ok(trimmed.every((r) => r.instruction === `Describe ${r.id}.` && r.staged_image_path === `_work/images/${r.id}.jpg` && r.constraints?.[0]?.type === 'length'));
});

/** An in-memory source of n samples; `scans` counts the times it was read. */
function source(n: number): SourceReader & { scans: number } {
  async function* items(): AsyncGenerator<SourceItem> {
    for (let i = 0; i < n; i++) {
      const id = String(i).padStart(9, '0');
      yield { sampleId: sampleIdFor('cc3m', id), source: 'cc3m', sourceId: id, licenseNote: 'x', image: { sourceIndex: 0, locator: { path: `${id}.jpg` } } };
    }
  }
  const reader = {
    scans: 0,
    segments: () => {
      reader.scans += 1;
      return inSegments(items());
    },
    readImage: async () => Buffer.alloc(0),
    origin: () => ({ file: 'test' }),
    describe: async () => 'test',
  };
  return reader;
}

test('a top-up round takes the next ranks of the same seeded order into new shards, once, and marks an exhausted source', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-topup-'));
  try {
    const store = new LocalStore(dir);
    const c = config({ targets: { instruct: 6, expectedYield: 1 } });
    const layout = buildLayout(c.buildId);
    const readers = [source(14)];
    const plan = await makeBuildPlan(c, store, layout, readers);
    assert.deepEqual([plan.shardSizes, plan.rounds, plan.shardSources], [[4, 2], [0], [0, 0]]);
    // Round 0 kept 5 of 6: 1 missing -> 4 more samples to be 95% sure, ranks 6-9, which planning's
    // scan ranked ahead (ranks 6-11): the source is not read again.
    let tallies = [tally(6, 5, 0)];
    const grown = await makeTopUpPlan(c, store, layout, readers, 1, async () => tallies);
    assert.deepEqual([grown.shardSizes, grown.rounds, grown.sources[0]!.selected, grown.sources[0]!.exhausted], [[4, 2, 4], [0, 2], 10, false]);
    assert.equal(readers[0]!.scans, 1, 'the top-up took its ranks from the reserve');
    assert.deepEqual(await makeTopUpPlan(c, store, layout, readers, 1, async () => assert.fail('a planned round is not planned again')), grown);

    // The shards of both rounds hold the 10 lowest ranks of a plan made for 10 samples at once, in order.
    const ids = async (s: LocalStore, shards: number) =>
      (await Promise.all(Array.from({ length: shards }, (_, i) => getJson<SourceSample[]>(s, layout.shardPlan(i))))).flatMap((x) => x!.map((y) => y.sourceId));
    const once = new LocalStore(path.join(dir, 'once'));
    await makeBuildPlan(config({ targets: { instruct: 10, expectedYield: 1 } }), once, layout, readers);
    assert.deepEqual(await ids(store, 3), await ids(once, 3));

    // 4 of 10 kept: 2 missing -> 10 samples (twice the point estimate), beyond the reserve: a scan
    // takes ranks 10-13, all the source has left.
    const scans = readers[0]!.scans;
    tallies = [tally(10, 4, 0)];
    const last = await makeTopUpPlan(c, store, layout, readers, 2, async () => tallies);
    assert.deepEqual([last.shardSizes.slice(3), last.sources[0]!.exhausted, readers[0]!.scans], [[4], true, scans + 1], 'asked for 10, only 4 left');
    const whole = new LocalStore(path.join(dir, 'whole'));
    await makeBuildPlan(config({ targets: { instruct: 14, expectedYield: 1 } }), whole, layout, readers);
    assert.deepEqual(await ids(store, 4), await ids(whole, 4), 'the reserve and the scan give the ranks one plan would');
    tallies = [tally(14, 5, 0, true)];
    assert.equal((await makeTopUpPlan(c, store, layout, readers, 3, async () => tallies)).targetsOutcome, 'sources-exhausted');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a round's shards start with their sources side by side, each source's in rank order", () => {
  // Round 0: source 0 in shards 0-3, source 1 in 4-5; round 1: source 0 in 6-8, source 1 in 9.
  const plan = { rounds: [0, 6], shardSources: [0, 0, 0, 0, 1, 1, 0, 0, 0, 1] };
  // The sources interleaved by their share of the round, round by round, each source's first shard leading.
  assert.deepEqual(startOrder(plan, [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]), [0, 4, 1, 2, 5, 3, 6, 9, 7, 8]);
  // Six shards of one source and three of one shard each: every source's first shard starts in the first wave.
  const mixed = { rounds: [0], shardSources: [0, 0, 0, 0, 0, 0, 1, 2, 3] };
  assert.deepEqual(startOrder(mixed, [0, 1, 2, 3, 4, 5, 6, 7, 8]), [0, 6, 7, 8, 1, 2, 3, 4, 5]);
});

test("a forecast is taken from every earlier round and the last round's shards in start order but its last wave", () => {
  // Round 0: source 0 in shards 0-3, source 1 in 4-5 (start order 0 4 1 2 5 3); round 1: source 0 in 6-8, source 1 in 9 (6 9 7 8).
  const plan = { rounds: [0, 6], shardSources: [0, 0, 0, 0, 1, 1, 0, 0, 0, 1] };
  const round0 = { rounds: [0], shardSources: plan.shardSources.slice(0, 6) };
  assert.deepEqual(forecastBasis(round0, 2), [0, 1, 2, 4], 'round 0 but its last 2 to start, 5 and 3');
  assert.deepEqual(forecastBasis(round0, 5), [0], 'one shard left to count');
  assert.equal(forecastBasis(round0, 6), undefined, 'a round of one wave is not forecast: its end is exact');
  assert.deepEqual(forecastBasis(plan, 2), [0, 1, 2, 3, 4, 5, 6, 9], 'every earlier round, and round 1 but 7 and 8');
  assert.equal(forecastBasis(plan, 4), undefined);
  // The samples a forecast has yet to count, per source.
  const sized = { ...plan, shardSizes: [4, 4, 4, 4, 3, 3, 4, 4, 2, 1] };
  assert.deepEqual(outstandingSamples(sized, 2, forecastBasis(plan, 2)!), [6, 0]);
  assert.deepEqual(outstandingSamples(sized, 3, [0, 1, 2, 3]), [10, 7, 0]);
});

test('the next round meets the deficit with 95% confidence at the measured yield, twice what was planned when nothing was kept, within maxSamples', () => {
  // 80 of 200 kept and 20 SFT records missing take 70 samples to be 95% sure.
  const c = config({ targets: { instruct: 100, expectedYield: 0.5 } });
  assert.deepEqual(nextRound(c, 1, [tally(200, 80, 0)]), { sizes: [70] });
  assert.deepEqual(nextRound(c, 1, [tally(20, 0, 0)]), { sizes: [40] });
  assert.deepEqual(nextRound(config({ maxSamples: 205, targets: { instruct: 100, expectedYield: 0.5 } }), 1, [tally(200, 80, 0)]), { sizes: [5] });
  assert.deepEqual(nextRound(config({ maxSamples: 200, targets: { instruct: 100, expectedYield: 0.5 } }), 1, [tally(200, 80, 0)]), { outcome: 'sample-limit' });
  // A forecast counts the samples planned beyond its tallies towards the bound: with 60 of the 70
  // still outstanding, 10 more; with 100, none (the exact count after the round decides).
  assert.deepEqual(nextRound(c, 1, [tally(200, 80, 0)], [60]), { sizes: [10] });
  assert.deepEqual(nextRound(c, 1, [tally(200, 80, 0)], [100]), { outcome: 'targets-met' });
  // Nothing kept yet: twice everything planned, the outstanding samples included.
  assert.deepEqual(nextRound(c, 1, [tally(20, 0, 0)], [30]), { sizes: [100] });
  // maxSamples counts the outstanding samples too.
  assert.deepEqual(nextRound(config({ maxSamples: 265, targets: { instruct: 100, expectedYield: 0.5 } }), 1, [tally(200, 80, 0)], [60]), { sizes: [5] });
});

test('commit order: a shard that can never be trimmed commits at once, any other once the earlier shards of its source have', () => {
  // Source 0 owes 10 SFT and 6 pairs; shards of 4 samples: 0 (src 0), 1 (src 1), 2 (src 0), 3 (src 0).
  const plan = { shardSizes: [4, 4, 4, 4], shardSources: [0, 1, 0, 0] };
  const goals = [{ instruct: 10, dpo: 6 }, {}];
  const none = new Map();
  // Shard 0 owes the whole goal; shard 2 would still owe >= 4 SFT but only 2 pairs after shard 0's 4 samples: it waits.
  assert.deepEqual(capsWhenDue(plan, goals, 0, none), { instruct: 10, dpo: 6 });
  assert.equal(capsWhenDue(plan, goals, 2, none), undefined);
  assert.deepEqual(capsWhenDue(plan, goals, 1, none), {}, 'a source without goals is never trimmed');
  // Shard 0 kept 3 SFT and 1 pair: shard 2 is capped by that, shard 3 still waits for shard 2.
  const committed = new Map([[0, { instruct: 3, dpo: 1 }]]);
  assert.deepEqual(capsWhenDue(plan, goals, 2, committed), { instruct: 7, dpo: 5 });
  assert.equal(capsWhenDue(plan, goals, 3, committed), undefined);
  committed.set(2, { instruct: 4, dpo: 4 });
  assert.deepEqual(capsWhenDue(plan, goals, 3, committed), { instruct: 3, dpo: 1 });
});

test('a committed shard is committed again when what the earlier shards of its source keep changed its records', () => {
  const goals = { instruct: 10, dpo: 6 };
  // Committed when the earlier shards kept 8 SFT and 5 pairs: capped at 2 and 1, it kept them and trimmed 1 and 2.
  const trimmedShard = { kept: { instruct: 2, dpo: 1 }, trimmed: { instruct: 1, dpo: 2 } };
  assert.equal(capsToRecommit(goals, { instruct: 8, dpo: 5 }, trimmedShard), undefined, 'the same counts keep the same records');
  // A late duplicate dropped one SFT record and its pair from an earlier shard: the trimmed ones come back.
  assert.deepEqual(capsToRecommit(goals, { instruct: 7, dpo: 4 }, trimmedShard), { instruct: 3, dpo: 2 });
  // A shard that trimmed nothing keeps all it accepted under the higher caps: its records stay.
  assert.equal(capsToRecommit(goals, { instruct: 7, dpo: 4 }, { kept: { instruct: 2, dpo: 1 }, trimmed: { instruct: 0, dpo: 0 } }), undefined);
  // An earlier shard that came to keep more lowers the caps below what this one keeps: it gives records up.
  assert.deepEqual(capsToRecommit(goals, { instruct: 9, dpo: 6 }, trimmedShard), { instruct: 1, dpo: 0 });
  assert.equal(capsToRecommit({}, { instruct: 0, dpo: 0 }, trimmedShard), undefined, 'a source without goals is never trimmed');
});

/** Targets of 6 SFT records at yield 1 over a source of 40: round 0 planned as shards of 4 and 2 samples, in a folder removed after `work`. */
async function withSixTargetPlan(
  work: (p: { c: ReturnType<typeof config>; store: LocalStore; layout: ReturnType<typeof buildLayout>; readers: ReturnType<typeof source>[] }) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-topup-'));
  try {
    const store = new LocalStore(dir);
    const c = config({ targets: { instruct: 6, expectedYield: 1 } });
    const layout = buildLayout(c.buildId);
    const readers = [source(40)];
    assert.deepEqual((await makeBuildPlan(c, store, layout, readers)).shardSizes, [4, 2]);
    await work({ c, store, layout, readers });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('a top-up round is planned from every shard committed, never from a part of the round', () =>
  withSixTargetPlan(async ({ c, store, layout, readers }) => {
    const seen: number[] = [];
    await assert.rejects(
      makeTopUpPlan(c, store, layout, readers, 1, async (p) => (seen.push(p.shardCount), [tally(4, 3, 0)])),
      /round 1 is planned from committed shards only, but 2 planned samples are not committed/,
    );
    assert.deepEqual(seen, [2], 'tallied over the plan of every shard');
    assert.equal((await getJson<BuildPlan>(store, layout.planSummary))!.rounds.length, 1, 'nothing planned');
    const grown = await makeTopUpPlan(c, store, layout, readers, 1, async () => [tally(6, 3, 0)]);
    assert.deepEqual([grown.shardSizes.length > 2, grown.rounds], [true, [0, 2]]);
  }));

test('a top-up round planned from a forecast: from the basis only, never an outcome, and the exact call after it decides', () =>
  withSixTargetPlan(async ({ c, store, layout, readers }) => {
    // A wave of one shard: the basis is shard 0, which kept 3 of 4. 3 are missing, which shard 1's 2
    // samples and 6 more meet with 95% confidence.
    const seen: Array<readonly number[]> = [];
    const forecast = { lastWave: 1 };
    const grown = await makeTopUpPlan(c, store, layout, readers, 1, async (_p, shards) => (seen.push(shards), [tally(4, 3, 0)]), undefined, forecast);
    assert.deepEqual(seen, [[0]], 'tallied over the basis only');
    assert.deepEqual(
      [grown.shardSizes, grown.rounds],
      [
        [4, 2, 4, 2],
        [0, 2],
      ],
    );
    // A forecast that meets the targets plans nothing and records no outcome.
    const met = await makeTopUpPlan(c, store, layout, readers, 2, async () => [tally(10, 6, 0)], undefined, forecast);
    assert.deepEqual([met.shardCount, met.targetsOutcome], [4, undefined]);
    // The basis must be committed.
    await assert.rejects(
      makeTopUpPlan(c, store, layout, readers, 2, async () => [tally(4, 2, 0)], undefined, forecast),
      /6 planned samples are not committed/,
    );
    // A round no larger than the wave is not forecast from.
    assert.equal((await makeTopUpPlan(c, store, layout, readers, 2, async () => assert.fail('no basis to tally'), undefined, { lastWave: 2 })).shardCount, 4);
    // The exact call once everything is committed records the outcome.
    assert.equal((await makeTopUpPlan(c, store, layout, readers, 2, async () => [tally(12, 6, 0)])).targetsOutcome, 'targets-met');
  }));

test('a source with fewer ranks than round 0 and its reserve is known exhausted from the reserve, without a scan', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-topup-reserve-'));
  try {
    const store = new LocalStore(dir);
    const c = config({ targets: { instruct: 8, expectedYield: 1 } });
    const layout = buildLayout(c.buildId);
    const readers = [source(11)];
    await makeBuildPlan(c, store, layout, readers);
    // 2 of 8 kept: 6 missing -> 48 samples asked for; the reserve holds the 3 ranks left, and says so.
    const grown = await makeTopUpPlan(c, store, layout, readers, 1, async () => [tally(8, 2, 0)]);
    assert.deepEqual([grown.shardSizes, grown.sources[0]!.exhausted, readers[0]!.scans], [[4, 4, 3], true, 1]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
