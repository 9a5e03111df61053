import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import { sampleIdFor } from '../../domain/hashing.js';
import type { SourceSample } from '../../domain/sample.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { ConfigMismatchError } from '../../pipeline/planning/configMismatchError.js';
import { configFingerprint, makeBuildPlan, sameStoredConfig, storedConfigOf } from '../../pipeline/planning/planBuild.js';
import { changedPrompts, PLACEHOLDER_RENDERS, promptMaterial } from '../../prompts/promptFingerprint.js';
import type { StoredConfig } from '../../pipeline/planning/planBuild.types.js';
import { expandPlan, planShape, shapeOf } from '../../domain/planShape.js';
import { sampleRank } from '../../pipeline/planning/ranking.js';
import { sourceShares } from '../../domain/targets.js';
import { inSegments, type SourceItem, type SourceReader } from '../../sources/contract.js';
import { getJson, putJson } from '../../storage/objectStore.js';
import { LocalStore } from '../../storage/localStore.js';

/** An in-memory source of n samples and one damaged unit, listed in the given order. */
function source(ids: string[]): SourceReader {
  async function* items(): AsyncGenerator<SourceItem> {
    for (const id of ids) {
      yield { sampleId: sampleIdFor('cc3m', id), source: 'cc3m', sourceId: id, licenseNote: 'x', image: { sourceIndex: 0, locator: { path: `${id}.jpg` } } };
    }
    yield { problem: true, kind: 'damaged', code: 'tar-unreadable', sourceId: '00009.tar', reason: '00009.tar is truncated' };
    yield { problem: true, kind: 'filtered', filter: 'multiple-choice', sourceId: 'q1', reason: 'has options' };
  }
  return {
    segments: () => inSegments(items()),
    readImage: async () => Buffer.alloc(0),
    origin: () => ({ file: 'test' }),
    describe: async () => 'test',
  };
}

const ids = Array.from({ length: 40 }, (_, i) => String(i).padStart(9, '0'));
const config = (over: Partial<BuildConfigInput>) =>
  parseBuildConfig({
    buildId: 'plan',
    output: '/unused',
    sources: [{ type: 'cc3m', uri: '/unused' }],
    maxSamples: 10,
    shardSize: 4,
    models: { default: { model: 'm' } },
    ...over,
  });

async function planned(store: LocalStore, c = config({}), order = ids) {
  const plan = await makeBuildPlan(c, store, buildLayout(c.buildId), [source(order)]);
  const shards: SourceSample[][] = [];
  for (let s = 0; s < plan.shardCount; s++) shards.push((await getJson<SourceSample[]>(store, buildLayout(c.buildId).shardPlan(s)))!);
  return { plan, shards, all: shards.flat().map((x) => x.sourceId) };
}

test('selection is seeded, independent of listing order, and extends when the quota grows', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-plan-'));
  try {
    const a = await planned(new LocalStore(path.join(dir, 'a')));
    assert.equal(a.plan.sampleCount, 10);
    assert.equal(a.plan.shardCount, 3);
    assert.deepEqual(
      a.shards.map((s) => s.length),
      [4, 4, 2],
    );
    assert.equal(a.plan.sourceProblems, 1);
    // What the scan read, counted as it streamed: 40 samples, one damaged unit, one filtered record.
    const [counted] = a.plan.sources;
    assert.deepEqual(
      [counted!.read, counted!.samples, counted!.problems, counted!.filtered, counted!.selected, counted!.ranked],
      [42, 40, { 'tar-unreadable': 1 }, { 'multiple-choice': 1 }, 10, 10],
    );

    const reversed = await planned(new LocalStore(path.join(dir, 'b')), config({}), [...ids].reverse());
    assert.deepEqual(reversed.all, a.all);

    const larger = await planned(new LocalStore(path.join(dir, 'c')), config({ maxSamples: 20 }));
    assert.deepEqual(larger.all.slice(0, 10), a.all, 'a larger quota keeps the earlier picks, in place');

    const reseeded = await planned(new LocalStore(path.join(dir, 'd')), config({ seed: 99 }));
    assert.notDeepEqual(reseeded.all, a.all);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('source problems are recorded, and a changed config is refused for an existing build', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-plan-'));
  try {
    const store = new LocalStore(dir);
    await planned(store);
    const problems = (await store.get(buildLayout('plan').sourceProblems))!.toString();
    assert.match(problems, /00009\.tar is truncated/);
    assert.deepEqual(JSON.parse(problems), {
      problem: true,
      kind: 'damaged',
      code: 'tar-unreadable',
      sourceId: '00009.tar',
      reason: '00009.tar is truncated',
      source: 'cc3m',
      sourceIndex: 0,
    });
    assert.doesNotMatch(problems, /has options/, 'filtered records are counted, not listed');
    assert.deepEqual(JSON.parse((await store.get(buildLayout('plan').sourceFiltered))!.toString()), { '0:cc3m': { 'multiple-choice': 1 } });
    await planned(store); // the same config again is fine
    await assert.rejects(planned(store, config({ seed: 5 })), ConfigMismatchError);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** The prompts as this code renders them, with the answer prompt's opening reworded and its version kept. */
const reworded: typeof PLACEHOLDER_RENDERS = {
  ...PLACEHOLDER_RENDERS,
  answer: () => {
    const prompt = PLACEHOLDER_RENDERS.answer();
    const [first, ...rest] = prompt.messages;
    return { ...prompt, messages: [{ ...first!, text: first!.text.replace('## Task Description', '## The task') }, ...rest] };
  },
};

test("a prompt's text is in the fingerprint: a reworded prompt changes it without a version bump, and only the build modes that send it", () => {
  const single = config({});
  assert.equal(reworded.answer().version, PLACEHOLDER_RENDERS.answer().version);
  assert.notEqual(reworded.answer().messages[0]!.text, PLACEHOLDER_RENDERS.answer().messages[0]!.text);
  assert.deepEqual(changedPrompts(promptMaterial(single), promptMaterial(single, reworded)), ['answer']);
  assert.notEqual(configFingerprint(single, promptMaterial(single, reworded)), configFingerprint(single));
  assert.equal(configFingerprint(single, promptMaterial(single)), configFingerprint(single));
  // A multiturn build never sends the single-turn answer prompt.
  const multiturn = config({ mode: 'multiturn' });
  assert.equal(configFingerprint(multiturn, promptMaterial(multiturn, reworded)), configFingerprint(multiturn));
  assert.deepEqual(Object.keys(promptMaterial(multiturn)), ['chat_answer', 'chat_questions', 'compatibility', 'constraints', 'verifier_selection']);
});

test('a build planned under another wording of a prompt is refused, naming the prompt and the way out in one line', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-plan-'));
  try {
    const store = new LocalStore(dir);
    const current = config({});
    await putJson(store, buildLayout('plan').config, storedConfigOf(current, promptMaterial(current, reworded)));
    await assert.rejects(sameStoredConfig(current, store, buildLayout('plan')), (err: Error) => {
      assert.ok(err instanceof ConfigMismatchError);
      assert.match(
        err.message,
        /^build 'plan' already exists in .* with prompts changed since it was planned \(answer\) \(fingerprint [0-9a-f]{12}, now [0-9a-f]{12}\); use a new buildId for a new version \('mmif build --new-version' picks one\)$/,
      );
      return true;
    });
    // A changed setting as well: both named.
    await assert.rejects(sameStoredConfig(config({ seed: 5 }), store, buildLayout('plan')), /with a different config and prompts changed since it was planned \(answer\)/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('source targets: quotas first, then weights share what is left, remainders to the largest fractions', () => {
  assert.deepEqual(sourceShares(23, [{ weight: 13 }, { weight: 6 }, { weight: 4 }]), [13, 6, 4]);
  assert.deepEqual(sourceShares(10, [{ quota: 4 }, {}, {}]), [4, 3, 3]);
  assert.deepEqual(sourceShares(10, [{}, {}, {}]), [4, 3, 3]);
  assert.deepEqual(sourceShares(5, [{ quota: 8 }, { weight: 2 }]), [8, 0], 'quotas are kept even past maxSamples');
  assert.deepEqual(sourceShares(7, [{}]), [7]);
});

test('several sources: each gets its target, in shards of its own', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-plan-'));
  try {
    const store = new LocalStore(dir);
    const c = config({
      maxSamples: 9,
      sources: [
        { type: 'cc3m', uri: '/a', weight: 2 },
        { type: 'cc3m', uri: '/b', weight: 1 },
      ],
    });
    async function* items(ids: string[]): AsyncGenerator<SourceItem> {
      for (const id of ids)
        yield { sampleId: sampleIdFor('cc3m', `b-${id}`), source: 'cc3m', sourceId: `b-${id}`, licenseNote: 'x', image: { sourceIndex: 1, locator: { path: id } } };
    }
    const other = (ids: string[]): SourceReader => ({
      segments: () => inSegments(items(ids)),
      readImage: async () => Buffer.alloc(0),
      origin: () => ({ file: 'test' }),
      describe: async () => 'test',
    });
    const plan = await makeBuildPlan(c, store, buildLayout('plan'), [source(ids), other(ids)]);
    assert.deepEqual(
      plan.sources.map((s) => [s.target, s.selected]),
      [
        [6, 6],
        [3, 3],
      ],
    );
    assert.deepEqual(plan.shardSizes, [4, 2, 3], 'a shard never mixes sources');
    const third = (await getJson<SourceSample[]>(store, buildLayout('plan').shardPlan(2)))!;
    assert.ok(third.every((s) => s.image.sourceIndex === 1));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** A source of cc3m samples `<prefix>-<id>`, for plans over several sources. */
function prefixed(prefix: string, sourceIndex: number, ids: readonly string[]): SourceReader {
  async function* items(): AsyncGenerator<SourceItem> {
    for (const id of ids)
      yield { sampleId: sampleIdFor('cc3m', `${prefix}-${id}`), source: 'cc3m', sourceId: `${prefix}-${id}`, licenseNote: 'x', image: { sourceIndex, locator: { path: id } } };
  }
  return { segments: () => inSegments(items()), readImage: async () => Buffer.alloc(0), origin: () => ({ file: 'test' }), describe: async () => 'test' };
}

test('maxSamples kept whole: the slots of a source that runs short go to the sources with records left, by the seeded order across them', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-plan-'));
  try {
    const store = new LocalStore(dir);
    // A quota of 5, then 35 shared 12 / 12 / 11; b holds 9, so 3 slots are free for a and c (d has a quota and takes none).
    const c = config({
      buildId: 'slots',
      seed: 4,
      maxSamples: 40,
      shardSize: 8,
      sources: [
        { type: 'cc3m', uri: '/a' },
        { type: 'cc3m', uri: '/b' },
        { type: 'cc3m', uri: '/c' },
        { type: 'cc3m', uri: '/d', quota: 5 },
      ],
    });
    const [a, b, cIds, d] = [ids, ids.slice(0, 9), ids, ids];
    const plan = await makeBuildPlan(c, store, buildLayout('slots'), [prefixed('a', 0, a), prefixed('b', 1, b), prefixed('c', 2, cIds), prefixed('d', 3, d)]);
    assert.equal(plan.sampleCount, 40, 'every slot of maxSamples planned');
    // The seeded order across the takers: their ranks beyond their shares, lowest first.
    const beyond = (prefix: string, list: string[], share: number) =>
      list
        .map((id) => ({ prefix, rank: sampleRank(c.seed, sampleIdFor('cc3m', `${prefix}-${id}`)) }))
        .sort((x, y) => (x.rank < y.rank ? -1 : 1))
        .slice(share);
    const taken = [...beyond('a', a, 12), ...beyond('c', cIds, 11)].sort((x, y) => (x.rank < y.rank ? -1 : 1)).slice(0, 3);
    const extraOf = (prefix: string) => taken.filter((t) => t.prefix === prefix).length;
    assert.deepEqual(
      plan.sources.map((s) => [s.target, s.selected, s.extra ?? 0]),
      [
        [12, 12 + extraOf('a'), extraOf('a')],
        [12, 9, 0],
        [11, 11 + extraOf('c'), extraOf('c')],
        [5, 5, 0],
      ],
    );
    assert.ok(extraOf('a') > 0 && extraOf('c') > 0, 'seed 4 gives slots to both takers, so the order across them is tested');
    assert.deepEqual(plan.freeSlots, { freed: 3, unused: 0 });
    assert.equal(plan.sources[1]!.exhausted, true);

    // Every source runs out: the slots stay unused, and the plan says how many.
    const short = config({
      buildId: 'short',
      maxSamples: 40,
      sources: [
        { type: 'cc3m', uri: '/a' },
        { type: 'cc3m', uri: '/b' },
      ],
    });
    const none = await makeBuildPlan(short, store, buildLayout('short'), [prefixed('a', 0, ids.slice(0, 15)), prefixed('b', 1, b)]);
    assert.equal(none.sampleCount, 24);
    assert.deepEqual(none.freeSlots, { freed: 16, unused: 16 });
    assert.ok(none.sources.every((s) => s.exhausted && !s.extra));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a plan by reference: its shape codes each shard size and source in runs, expands back to them, and stays small at 50,000 shards', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-plan-shape-'));
  try {
    const c = config({});
    const { plan } = await planned(new LocalStore(dir), c);
    const shape = planShape(plan, buildLayout(c.buildId).planSummary);
    assert.deepEqual(shape.runs, [
      [4, 0, 2],
      [2, 0, 1],
    ]);
    assert.equal(shape.key, 'plan/_work/plan/summary.json');
    const expanded = expandPlan(shape);
    assert.deepEqual([expanded.shardSizes, expanded.shardSources, expanded.shardCount, expanded.rounds], [plan.shardSizes, plan.shardSources, 3, [0]]);
    assert.deepEqual(shapeOf(expanded), shape);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  // Three sources over two rounds, each source's last shard of a round short: 50,000 shards.
  const sizes: number[] = [];
  const sources: number[] = [];
  for (const [source, count] of [
    [0, 20_000],
    [1, 15_000],
    [2, 10_000],
    [0, 3_000],
    [1, 2_000],
  ] as const) {
    for (let i = 0; i < count; i++) (sizes.push(i === count - 1 ? 3 : 8), sources.push(source));
  }
  const big = { configFingerprint: 'f', sampleCount: 0, shardCount: sizes.length, rounds: [0, 45_000], shardSizes: sizes, shardSources: sources };
  const bigShape = planShape(big, 'big/_work/plan/summary.json');
  assert.equal(bigShape.shardCount, 50_000);
  assert.equal(bigShape.runs.length, 10);
  assert.ok(JSON.stringify(bigShape).length < 500, JSON.stringify(bigShape));
  assert.ok(JSON.stringify({ sizes, sources }).length > 200_000, 'the per-shard lists it replaces');
  assert.deepEqual(expandPlan(bigShape).shardSizes, sizes);
});
