/**
 * The viewer at the paper's size: 23,000 SFT records and 23,000 DPO pairs (generated, with six
 * sources, the catalogue's constraint types and about 4% failed verdicts), written by the
 * ViewerWriter to disk and opened from file:// in headless Chromium. The first page of records is on
 * screen with the right records, and so is a filter's first page; a rare (type, verdict) filter,
 * whose first 50 matches are spread over many data files, too. Their times are printed as test
 * diagnostics, not bounded: a wall-time bound flakes under load and belongs in a benchmark.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CONSTRAINT_TYPES } from '../../domain/constraints/catalogue.js';
import { sha256Hex } from '../../domain/hashing.js';
import type { DpoRecord, InstructRecord } from '../../output/contracts/records.js';
import { VIEWER_CHUNK, ViewerWriter } from '../../output/viewer/viewerPage.js';
import { imagePathInDataset } from '../../storage/buildLayout.js';
import { sceneJpeg } from '../fixtures/images.js';
import { HeadlessChromium, type Tab } from '../harness/headlessChromium.js';

const PER_KIND = 23_000;
const SOURCES = ['cc3m', 'allava', 'chartqa', 'geo170k', 'rico', 'multiui'];
const TYPES = CONSTRAINT_TYPES.map((t) => t.key);

let dir: string;
/** Each record's id and verdict tokens, in the order written, to know what a filter must match. */
const written: Array<{ id: string; kind: 'sft' | 'dpo'; source: string; tokens: string[] }> = [];

/** A small deterministic generator, so each run writes the same dataset. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-viewer-scale-'));
  const images: string[] = [];
  for (let i = 0; i < 8; i++) {
    const jpeg = await sceneJpeg(i, 320, 240);
    const at = imagePathInDataset(sha256Hex(jpeg));
    await mkdir(path.join(dir, path.dirname(at)), { recursive: true });
    await writeFile(path.join(dir, at), jpeg);
    images.push(at);
  }
  const next = random(7);
  const pick = <T>(values: readonly T[]) => values[Math.floor(next() * values.length)]!;
  const answer = 'A harbour at dusk: three boats, a lighthouse and a line of warehouses. '.repeat(8);
  const sample = (i: number) => {
    const source = pick(SOURCES);
    const types = [...new Set(Array.from({ length: 5 }, () => pick(TYPES)))];
    const constraints = types.map((type) => ({ type, value: `Follow the ${type} constraint in a sentence or two of plain words.`, method: 'rule', verifiers: [] }));
    const verdicts = types.map((type, index) => ({ index, type, method: 'rule', passed: next() > 0.04, detail: 'checked by the rule function' }));
    const base = {
      source,
      source_id: `${source}/${i}`,
      image_path: images[i % images.length]!,
      instruction: 'Describe the scene for a travel brochure.',
      constraints,
      verdicts,
      pass_rate: 1,
    };
    return { base, tokens: [...new Set(verdicts.map((v) => `${v.type}:${v.passed ? 'passed' : 'failed'}`))] };
  };
  const writer = new ViewerWriter({ pageName: 'viewer.html', buildId: 'paper-scale', imageSrc: (p) => p });
  const put = async (file: { path: string; body: string } | undefined) => {
    if (!file) return;
    await mkdir(path.join(dir, path.dirname(file.path)), { recursive: true });
    await writeFile(path.join(dir, file.path), file.body);
  };
  for (let i = 0; i < PER_KIND; i++) {
    const { base, tokens } = sample(i);
    const id = `${base.source}-sft-${i}`;
    written.push({ id, kind: 'sft', source: base.source, tokens });
    await put(writer.addSft({ ...base, id, answer, answer_attempts: 1, models: { answer: 'vlm' } } as unknown as InstructRecord));
  }
  for (let i = 0; i < PER_KIND; i++) {
    const { base, tokens } = sample(PER_KIND + i);
    const id = `${base.source}-dpo-${i}`;
    written.push({ id, kind: 'dpo', source: base.source, tokens });
    const pair = {
      ...base,
      id,
      chosen: answer,
      rejected: answer.slice(0, 200),
      strategy: 'drop33',
      dropped_constraints: base.constraints.slice(0, 1),
      rejected_verdicts: base.verdicts,
      chosen_model: 'vlm',
      rejected_model: 'vlm-mini',
    };
    await put(writer.addPair(pair as unknown as DpoRecord));
  }
  for (const file of writer.finish({ simulated: false })) await put(file);
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Sets the filters as a user would and resolves with the ms until the matches are on screen (a frame painted). */
function filterTiming(tab: Tab, filters: Record<string, string>): Promise<number> {
  return tab.evaluate<number>(`(async () => {
    const main = document.querySelector('main');
    const started = performance.now();
    for (const [id, value] of Object.entries(${JSON.stringify(filters)})) {
      const s = document.getElementById(id);
      s.value = value;
      s.dispatchEvent(new Event('change'));
    }
    while (main.dataset.state !== 'ready') await new Promise((r) => requestAnimationFrame(r));
    await new Promise((r) => requestAnimationFrame(r));
    return performance.now() - started;
  })()`);
}

const onScreen = (tab: Tab) => tab.evaluate<string[]>(`[...document.querySelectorAll('main article.sample')].map((a) => a.id)`);

test('46,000 records: the first page and filters show the right records in headless Chromium (their times as diagnostics)', async (t) => {
  const browser = await HeadlessChromium.launch();
  try {
    const tab = await browser.open(pathToFileURL(path.join(dir, 'viewer.html')).href);
    await tab.waitFor(`document.querySelector('main').dataset.state === 'ready'`);
    // From navigation to the first page rendered (the page marks it), then a frame.
    const firstPage = await tab.evaluate<number>(`new Promise((r) => requestAnimationFrame(() => r(performance.getEntriesByName('mmif-rendered')[0].startTime)))`);
    t.diagnostic(`first page of 46,000 records on screen ${firstPage.toFixed(0)} ms after navigation`);
    assert.deepEqual(
      await onScreen(tab),
      written.slice(0, 50).map((w) => w.id),
      'the first 50 records, in order',
    );
    assert.equal(await tab.evaluate<string>(`document.getElementById('shown').textContent`), `${2 * PER_KIND} of ${2 * PER_KIND} shown.`);
    const widths = await tab.evaluate<number[]>(
      `Promise.all([...document.images].slice(0, 4).map(async (img) => { img.loading = 'eager'; await img.decode().catch(() => {}); return img.naturalWidth; }))`,
    );
    assert.deepEqual(widths, [320, 320, 320, 320], "images render from the page's relative paths");

    // A common filter: DPO pairs of one source.
    const common = await filterTiming(tab, { 'f-kind': 'dpo', 'f-source': 'chartqa' });
    const pairs = written.filter((w) => w.kind === 'dpo' && w.source === 'chartqa');
    t.diagnostic(`filter kind=dpo, source=chartqa (${pairs.length} matches) on screen in ${common.toFixed(0)} ms`);
    assert.equal(await tab.evaluate<string>(`document.getElementById('shown').textContent`), `${pairs.length} of ${2 * PER_KIND} shown.`);
    assert.deepEqual(
      await onScreen(tab),
      pairs.slice(0, 50).map((w) => w.id),
    );

    // A rare one: a failed verdict of one type, its first 50 matches spread over many data files.
    const token = `${TYPES[3]}:failed`;
    const rare = await filterTiming(tab, { 'f-kind': '', 'f-source': '', 'f-type': TYPES[3]!, 'f-verdict': 'failed' });
    const matches = written.filter((w) => w.tokens.includes(token));
    t.diagnostic(
      `filter ${token} (${matches.length} matches, the first 50 in ${new Set(matches.slice(0, 50).map((w) => Math.floor(written.indexOf(w) / VIEWER_CHUNK))).size} data files) on screen in ${rare.toFixed(0)} ms`,
    );
    assert.equal(await tab.evaluate<string>(`document.getElementById('shown').textContent`), `${matches.length} of ${2 * PER_KIND} shown.`);
    assert.deepEqual(
      await onScreen(tab),
      matches.slice(0, 50).map((w) => w.id),
    );

    // The next page: the next 50 matches.
    await tab.evaluate(`document.getElementById('p-next').click()`);
    await tab.waitFor(`document.querySelector('main').dataset.state === 'ready'`);
    assert.deepEqual(
      await onScreen(tab),
      matches.slice(50, 100).map((w) => w.id),
    );
    assert.match(await tab.evaluate<string>(`document.getElementById('p-at').textContent`), new RegExp(`^page 2 of ${Math.ceil(matches.length / 50)}$`));
  } finally {
    await browser.close();
  }
});
