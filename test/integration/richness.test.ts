/**
 * The image.richness stage: the authors' score files (layouts of MM-IFEngine's data_gen/data_filter
 * scripts, see test/fixtures/richness/README.md), the selection rule, the built-in statistic, and
 * planning with each scorer over the quickstart's sample images: imported scores, the statistic,
 * VLM tag counts from the simulator over HTTP, and an external scorer on a loopback HTTP server.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { contextFor, richnessTools } from '../../activities/runtime.js';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import { judgeWindow, topFractionCutoff, type ScoreOutcome } from '../../domain/richness.js';
import type { SourceSample } from '../../domain/sample.js';
import { imageComplexity } from '../../image/complexity.js';
import { makeBuildPlan } from '../../pipeline/planning/planBuild.js';
import { makeTopUpPlan } from '../../pipeline/planning/topUp.js';
import { parseImportedScores } from '../../sources/importedScores.js';
import { getJson } from '../../storage/objectStore.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { img2datasetParquet, packTar, sideFileRow } from '../fixtures/cc3m.js';
import { sceneJpeg } from '../fixtures/images.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/richness/', import.meta.url));
let dir: string;
let sim: SimulatorHandle;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-richness-'));
  sim = await startSimulator({ seed: 1 });
});
after(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

const fixture = async (name: string) => (await readFile(path.join(FIXTURES, name))).toString('utf8');

test("the authors' three score files read the same scores; ic_ram_output.csv adds the RAM++ tag counts", async () => {
  const jsonl = parseImportedScores(await fixture('final_output.jsonl'), 'final_output.jsonl');
  const sorted = parseImportedScores(await fixture('final_output_sorted.csv'), 'final_output_sorted.csv');
  const ram = parseImportedScores(await fixture('ic_ram_output.csv'), 'ic_ram_output.csv');
  assert.equal(jsonl.size, 10);
  for (const [name, { score }] of jsonl) {
    assert.equal(sorted.get(name)?.score, score, name);
    assert.equal(ram.get(name)?.score, score, name);
  }
  assert.deepEqual(ram.get('000000001.jpg'), { score: 0.6842, tags: 8 });
  assert.equal(sorted.get('000000001.jpg')?.tags, undefined);
  // Any filename,score[,ram_cnt] file works, JSONL too; paths match by base name.
  assert.deepEqual([...parseImportedScores('{"filename": "a/b/x.jpg", "score": 0.5, "ram_cnt": 3}\n', 'x.jsonl')], [['x.jpg', { score: 0.5, tags: 3 }]]);
  assert.deepEqual([...parseImportedScores('score,filename\n0.25,"odd, name.jpg"\n', 'y.csv')], [['odd, name.jpg', { score: 0.25 }]]);
});

test('a bad score file is refused with the file, the line and the cause', () => {
  assert.throws(() => parseImportedScores('name,score\nx.jpg,1\n', 's.csv'), /s\.csv: the header needs "filename" and "score" columns/);
  assert.throws(() => parseImportedScores('filename,score\nx.jpg,high\n', 's.csv'), /s\.csv row 2: score "high" is not a number/);
  assert.throws(() => parseImportedScores('filename,score\nx.jpg,1\nx.jpg,2\n', 's.csv'), /row 3: x\.jpg is scored twice/);
  assert.throws(() => parseImportedScores('{"x.jpg": 1}\n{"x.jpg": 2, "y.jpg": 3}\n', 's.jsonl'), /s\.jsonl line 2: expected/);
  assert.throws(() => parseImportedScores('filename,score,ram_cnt\nx.jpg,1,2.5\n', 's.csv'), /ram_cnt "2.5" is not a count/);
});

const scored = (score: number, tags?: number): ScoreOutcome => ({ ok: true, value: { scorer: 't', score, ...(tags !== undefined ? { tags } : {}) } });

test('the rule keeps what passes the thresholds, then the best share of the window, ties to the lower rank', () => {
  const window = [scored(0.5, 3), scored(0.9, 1), { ok: false, reason: 'corrupt: bad' } as ScoreOutcome, scored(0.5, 9), scored(0.2, 9)];
  const fates = (rule: Parameters<typeof judgeWindow>[1]) => judgeWindow(window, rule).map((d) => (d.selected ? 'keep' : d.reason.split(':')[0]));
  assert.deepEqual(fates({ minScore: 0.4 }), ['keep', 'keep', 'unscorable', 'keep', 'below-min-score']);
  assert.deepEqual(fates({ minTags: 3 }), ['keep', 'below-min-tags', 'unscorable', 'keep', 'keep']);
  // Best half of 4 scored: 0.9 and the first 0.5 (lower rank wins the tie).
  assert.deepEqual(fates({ topFraction: 0.5 }), ['keep', 'keep', 'unscorable', 'below-top-fraction', 'below-top-fraction']);
  assert.deepEqual(judgeWindow([scored(0.5)], { minTags: 1 }), [{ selected: false, reason: 'no-tag-count: the scorer gave no tag count' }]);
  assert.equal(topFractionCutoff([0.1, 0.9, 0.5, 0.7], 0.5), 0.7);
});

test('the statistic ranks the quickstart images by structure: the city at night first, the blank sheet last', async () => {
  const density = async (key: string) => (await imageComplexity(await readFile(path.join(SAMPLES_DIR, '00000', `${key}.jpg`)), 64e6)).edgeDensity;
  const blank = await density('000000008');
  assert.equal(blank, 0);
  const all = await Promise.all(Array.from({ length: 10 }, (_, i) => density(`00000000${i}`)));
  assert.equal(Math.max(...all), all[1], 'the city skyline at night has the most edges');
  const noise = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 90 } } })
    .jpeg()
    .toBuffer();
  assert.ok((await imageComplexity(noise, 64e6)).edgeDensity > all[1]!, 'noise is all edges: the statistic measures structure, not meaning');
});

function build(id: string, richness: Record<string, unknown>, extra: Partial<BuildConfigInput> = {}) {
  return contextFor(
    parseBuildConfig({
      buildId: id,
      output: path.join(dir, 'out'),
      sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files', richness }],
      maxSamples: 10,
      shardSize: 4,
      models: { default: { model: 'mmif-sim-vlm', baseUrl: sim.url } },
      ...extra,
    }),
  );
}

async function plannedSamples(ctx: ReturnType<typeof build>) {
  const plan = await makeBuildPlan(ctx.config, ctx.store, ctx.layout, ctx.sources, richnessTools(ctx));
  const samples: SourceSample[] = [];
  for (let s = 0; s < plan.shardCount; s++) samples.push(...(await getJson<SourceSample[]>(ctx.store, ctx.layout.shardPlan(s)))!);
  const listing: Array<{ source_id: string; fate: string; score?: number; tags?: number }> = [];
  for await (const { key } of ctx.store.list(ctx.layout.richnessPrefix)) {
    listing.push(
      ...(await ctx.store.get(key))!
        .toString()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    );
  }
  return { plan, samples, listing };
}

test('statistic: planning scores the seeded window, keeps what passes, records every candidate, and reaches the source end', async () => {
  const { plan, samples, listing } = await plannedSamples(build('stat', { scorer: 'statistic', minScore: 0.02 }));
  assert.deepEqual(samples.map((s) => s.sourceId).sort(), ['000000001', '000000002', '000000003', '000000004', '000000005', '000000006', '000000007', '000000009']);
  assert.ok(samples.every((s) => s.richness?.scorer === 'statistic' && s.richness.score >= 0.02 && s.richness.entropyBits! > 0));
  assert.deepEqual(plan.sources[0]!.richness, { selected: 8, 'below-min-score': 2 });
  assert.equal(plan.sources[0]!.exhausted, true, 'wanted 10, only 8 pass');
  assert.equal(listing.length, 10, 'every scored candidate is listed with its fate');
  assert.deepEqual(
    listing
      .filter((l) => l.fate === 'below-min-score')
      .map((l) => l.source_id)
      .sort(),
    ['000000000', '000000008'],
  );
});

test("imported: the authors' ic_ram_output.csv selects exactly their top share, with a tag floor", async () => {
  const ctx = build('imported', { scorer: 'imported', scores: path.join(FIXTURES, 'ic_ram_output.csv'), topFraction: 0.5, minTags: 5 });
  const { samples, listing } = await plannedSamples(ctx);
  // Top half of the file by score: 001, 007, 004, 006, 003; 003 has 4 tags.
  assert.deepEqual(samples.map((s) => s.sourceId).sort(), ['000000001', '000000004', '000000006', '000000007']);
  assert.deepEqual(samples.find((s) => s.sourceId === '000000001')!.richness, { scorer: 'imported', score: 0.6842, tags: 8 });
  assert.equal(listing.find((l) => l.source_id === '000000003')!.fate, 'below-min-tags');
  // Below the file's cutoff (0.4418, the 5th of 10 scores): its own reason, naming the cutoff, not below-min-score.
  const below = listing.filter((l) => l.fate === 'below-top-fraction') as Array<{ source_id: string; reason?: string }>;
  assert.deepEqual(below.map((l) => l.source_id).sort(), ['000000000', '000000002', '000000005', '000000008', '000000009']);
  assert.ok(
    below.every((l) => /< 0\.4418, the lowest of the best 0\.5 of the scores file/.test(l.reason!)),
    JSON.stringify(below),
  );
  assert.ok(!listing.some((l) => l.fate === 'below-min-score'));
  await assert.rejects(
    plannedSamples(build('missing', { scorer: 'imported', scores: path.join(FIXTURES, 'nope.csv'), minScore: 0 })),
    /richness scores file .*nope\.csv does not exist/,
  );
});

test('imported scores match images of any extension: .webp members of webdataset tars planned from their side file, and a folder of .webp/.png/.jpeg', async () => {
  const keys = ['000000000', '000000001', '000000002', '000000003'];
  const images = await Promise.all(
    keys.map(async (key, i) => ({
      key,
      webp: await sharp(await sceneJpeg(i, 320, 240))
        .webp()
        .toBuffer(),
    })),
  );
  const tarRoot = path.join(dir, 'webp-tars');
  await mkdir(tarRoot, { recursive: true });
  await writeFile(path.join(tarRoot, '00000.tar'), packTar(images.map(({ key, webp }) => ({ path: `${key}.webp`, data: webp }))));
  await writeFile(path.join(tarRoot, '00000.parquet'), await img2datasetParquet(keys.map((key) => sideFileRow({ key, caption: `scene ${key}` }))));
  const folder = path.join(dir, 'mixed-folder');
  await mkdir(folder, { recursive: true });
  const extensions = ['webp', 'png', 'jpeg', 'jpg'];
  for (const [i, { key, webp }] of images.entries())
    await writeFile(
      path.join(folder, `${key}.${extensions[i]}`),
      await sharp(webp)
        .toFormat(extensions[i] as 'png')
        .toBuffer(),
    );
  // The IC9600 script's own lines, over os.listdir of the image folder each was unpacked to.
  const score = (i: number) => 0.1 * (i + 1);
  const scoresFile = async (name: string, extension: (i: number) => string) => {
    const file = path.join(dir, `${name}-scores.jsonl`);
    await writeFile(file, keys.map((key, i) => `${JSON.stringify({ [`${key}.${extension(i)}`]: score(i) })}\n`).join(''));
    return file;
  };
  for (const [name, source, scores] of [
    ['webp-tars', { type: 'cc3m', uri: tarRoot, layout: 'webdataset' }, await scoresFile('webp-tars', () => 'webp')],
    ['mixed-folder', { type: 'cc3m', uri: folder, layout: 'flat' }, await scoresFile('mixed-folder', (i) => extensions[i]!)],
  ] as const) {
    const ctx = contextFor(
      parseBuildConfig({
        buildId: name,
        output: path.join(dir, `out-${name}`),
        sources: [{ ...source, richness: { scorer: 'imported', scores, minScore: 0 } }],
        maxSamples: 4,
        shardSize: 4,
        models: { default: { model: 'mmif-sim-vlm', baseUrl: sim.url } },
      }),
    );
    const { samples, listing } = await plannedSamples(ctx);
    assert.deepEqual(
      listing.map((l) => l.fate),
      ['selected', 'selected', 'selected', 'selected'],
      `${name}: ${JSON.stringify(listing)}`,
    );
    assert.deepEqual(Object.fromEntries(samples.map((s) => [s.sourceId, s.richness!.score])), Object.fromEntries(keys.map((key, i) => [key, score(i)])), name);
  }
});

test('vlm-tags: the build endpoint lists tags (simulated, counted without repeats), each image asked once', async () => {
  sim.resetStats();
  const first = await plannedSamples(build('tags', { scorer: 'vlm-tags', minTags: 17 }));
  assert.equal(sim.stats().byStage.image_tags, 8, 'one call per image that passes the image checks (2 of 10 do not)');
  assert.equal(first.listing.filter((l) => l.fate === 'unscorable').length, 2);
  assert.ok(first.samples.length > 0 && first.samples.length < 8, `some images have 17 tags or more: ${JSON.stringify(first.listing)}`);
  for (const s of first.samples) assert.ok(s.richness!.tags! >= 17 && s.richness!.score === s.richness!.tags && s.richness!.simulated === true);
  // The city (46 KB JPEG) gets more tags than the plain sunset (11 KB): the simulator's tags follow detail.
  const tags = new Map(first.listing.map((l) => [l.source_id, l.tags!]));
  assert.ok(tags.get('000000001')! > tags.get('000000000')!);
  const again = await plannedSamples(build('tags-again', { scorer: 'vlm-tags', minTags: 17 }));
  assert.equal(sim.stats().byStage.image_tags, 8, 'a second build pays for no tag call');
  assert.deepEqual(
    again.samples.map((s) => s.richness),
    first.samples.map((s) => s.richness),
  );
});

test('endpoint: a user-served scorer gets each image as base64 JPEG; a refusal is recorded and asked again later, a score is cached', async () => {
  const seen = new Set<string>();
  let requests = 0;
  // Refuses each image the first time it sees it (as a scorer still warming up would), scores it after.
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    const answer = async () => {
      requests += 1;
      const { image } = JSON.parse(body) as { image: string };
      const meta = await sharp(Buffer.from(image, 'base64')).metadata();
      if (meta.format !== 'jpeg') return void res.writeHead(400).end('not a jpeg');
      if (!seen.has(image)) {
        seen.add(image);
        return void res.writeHead(422, { 'content-type': 'application/json' }).end('{"error": "not ready"}');
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ score: image.length / 1e5, tags: ['a', 'b', 'B'] }));
    };
    // An emitter ignores its listener's promise: a failure answers 500 instead of going unhandled.
    req.on('end', () => void answer().catch((err: unknown) => res.writeHead(500).end(String(err))));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/score`;
    const refused = await plannedSamples(build('http', { scorer: 'endpoint', url, minScore: 0 }));
    assert.equal(refused.samples.length, 0);
    assert.equal(requests, 8, 'the 8 images that pass the image checks were sent');
    assert.equal(refused.listing.filter((l) => /scorer-refused: HTTP 422/.test((l as { reason?: string }).reason ?? '')).length, 8);

    const scored = await plannedSamples(build('http-2', { scorer: 'endpoint', url, minScore: 0 }));
    assert.equal(requests, 16, 'refusals are not cached: asked again');
    assert.equal(scored.samples.length, 8);
    for (const s of scored.samples) assert.deepEqual(s.richness, { scorer: 'endpoint', score: s.richness!.score, tags: 2 }, 'tag lists are counted without repeats');

    await plannedSamples(build('http-3', { scorer: 'endpoint', url, minScore: 0 }));
    assert.equal(requests, 16, 'scores are cached: no image is sent again');
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test('with targets, a top-up round scores the next window after the ranks already scored', async () => {
  const ctx = build('topup', { scorer: 'statistic', minScore: 0.02 }, { targets: { instruct: 3, expectedYield: 1 } });
  const first = await plannedSamples(ctx);
  // Round 0 wants 3: a window of 3 / 0.5 (default pass rate) = 6 ranks.
  assert.equal(first.plan.sources[0]!.ranked, 6);
  assert.equal(first.samples.length, 3);
  const firstRanks = new Set(first.listing.map((l) => l.source_id));
  const grown = await makeTopUpPlan(ctx.config, ctx.store, ctx.layout, ctx.sources, 1, async () => [{ planned: 3, instruct: 1, dpo: 0, exhausted: false }], richnessTools(ctx));
  // 2 missing at a yield of 1/3: 6 more samples wanted, a window of 12 ranks, only 4 left.
  assert.equal(grown.sources[0]!.ranked, 10);
  assert.equal(grown.sources[0]!.exhausted, true);
  const added = (
    await Promise.all(grown.shardSizes.slice(first.plan.shardCount).map((_, i) => getJson<SourceSample[]>(ctx.store, ctx.layout.shardPlan(first.plan.shardCount + i))))
  ).flatMap((s) => s!);
  assert.ok(added.length > 0 && added.every((s) => !firstRanks.has(s.sourceId) && s.richness!.score >= 0.02), 'only new, scored, passing images');
  const fates = grown.sources[0]!.richness!;
  assert.equal(
    Object.values(fates).reduce((a, b) => a + b, 0),
    10,
    'every image scored once over both rounds',
  );
});
