// Decontamination's image match on generated corpora of each image kind (photos, charts, UI
// screens, diagrams: test/fixtures/imageKinds.ts). For N distinct images per kind and copies of
// them (resized, re-encoded, cropped, re-compressed, colour-shifted, combined): copies caught (a
// candidate by dHash, confirmed by domain/imageMatch.ts) and distinct pairs confirmed (false
// positives), with the distributions the thresholds were chosen from.
// Run: npx tsx bench/decontamination.ts [--n 1000] [--copies 3] [--pairs 100000] [--kinds chart,ui]
import { parseArgs } from 'node:util';
import { CANDIDATE_BITS, hammingDistance, type Fingerprint } from '../domain/decontamination.js';
import { isSamePicture, likeness, SAME_PICTURE_WORST, type Likeness } from '../domain/imageMatch.js';
import { mapLimit } from '../domain/mapLimit.js';
import { rngFor } from '../domain/random.js';
import { imageFingerprint } from '../image/perceptualHash.js';
import { COPY_KINDS, copyOf, IMAGE_KINDS, kindImage, type ImageKind } from '../test/fixtures/imageKinds.js';
import { quantile } from './harness.js';

const { values } = parseArgs({
  options: { n: { type: 'string', default: '1000' }, copies: { type: 'string', default: '3' }, pairs: { type: 'string', default: '100000' }, kinds: { type: 'string' } },
});
const n = Number(values.n);
const copiesEach = Number(values.copies);
const pairBudget = Number(values.pairs);
const kinds = values.kinds ? (values.kinds.split(',') as ImageKind[]) : IMAGE_KINDS;
const q = (values: number[], p: number, digits = 2) => (values.length ? quantile(values, p).toFixed(digits) : '-');
const matches = (a: Fingerprint, b: Fingerprint): { candidate: boolean; like?: Likeness } => {
  if (hammingDistance(a.dHash, b.dHash) > CANDIDATE_BITS) return { candidate: false };
  return { candidate: true, like: likeness(a.rendering, b.rendering) };
};
const started = performance.now();
const rows: string[] = [];
for (const kind of kinds) {
  const t0 = performance.now();
  const originals: Fingerprint[] = [];
  const copies: Array<{ of: number; how: string; fp: Fingerprint }> = [];
  await mapLimit(
    Array.from({ length: n }, (_, i) => i),
    4,
    async (i) => {
      const image = await kindImage(kind, i);
      originals[i] = await imageFingerprint(image);
      for (let c = 0; c < copiesEach; c++) {
        const how = COPY_KINDS[(i * copiesEach + c) % COPY_KINDS.length]!;
        copies.push({ of: i, how, fp: await imageFingerprint(await copyOf(image, how, i * 31 + c)) });
      }
    },
  );
  const made = (performance.now() - t0) / 1000;
  let caught = 0;
  const missed: Record<string, number> = {};
  const copyWorst: number[] = [];
  const copyColour: number[] = [];
  for (const copy of copies) {
    const m = matches(copy.fp, originals[copy.of]!);
    if (m.like) copyWorst.push(m.like.worst);
    if (m.like) copyColour.push(m.like.colour);
    if (m.like && isSamePicture(m.like)) caught++;
    else missed[copy.how] = (missed[copy.how] ?? 0) + 1;
  }
  // Distinct pairs: every pair, or a seeded sample of `pairBudget` of them.
  const total = (n * (n - 1)) / 2;
  const rng = rngFor('bench-decontamination', kind);
  const t1 = performance.now();
  let pairs = 0;
  let candidates = 0;
  let falsePositives = 0;
  const distinctWorst: number[] = [];
  const distinctCorrelation: number[] = [];
  /** The colour residual of distinct pairs the grey rendering alone would have confirmed. */
  const greySameColour: number[] = [];
  const consider = (i: number, j: number) => {
    pairs++;
    const m = matches(originals[i]!, originals[j]!);
    if (!m.candidate) return;
    candidates++;
    distinctWorst.push(m.like!.worst);
    distinctCorrelation.push(m.like!.correlation);
    if (m.like!.worst <= SAME_PICTURE_WORST) greySameColour.push(m.like!.colour);
    if (isSamePicture(m.like!)) falsePositives++;
  };
  if (total <= pairBudget) {
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) consider(i, j);
  } else {
    const seen = new Set<number>();
    while (pairs < pairBudget) {
      const i = Math.floor(rng() * n);
      const j = Math.floor(rng() * n);
      if (i === j || seen.has(Math.min(i, j) * n + Math.max(i, j))) continue;
      seen.add(Math.min(i, j) * n + Math.max(i, j));
      consider(i, j);
    }
  }
  const compared = (performance.now() - t1) / 1000;
  [copyWorst, copyColour, distinctWorst, distinctCorrelation, greySameColour].forEach((s) => s.sort((a, b) => a - b));
  const recall = (100 * caught) / copies.length;
  rows.push(`| ${kind} | ${n} | ${copies.length} | ${recall.toFixed(2)}% | ${pairs} | ${candidates} | ${falsePositives} |`);
  console.log(
    `${kind}: ${n} images + ${copies.length} copies made in ${made.toFixed(0)} s; copies caught ${caught}/${copies.length} (${recall.toFixed(2)}%), missed ${JSON.stringify(missed)}; copy worst p50 ${q(copyWorst, 0.5)} p99 ${q(copyWorst, 0.99)} max ${q(copyWorst, 1)}; copy colour p99 ${q(copyColour, 0.99, 3)} max ${q(copyColour, 1, 3)}\n` +
      `  distinct pairs ${pairs} of ${total}: ${candidates} candidates, ${falsePositives} confirmed (false positives); candidate worst min ${q(distinctWorst, 0)} p1 ${q(distinctWorst, 0.01)}, correlation max ${q(distinctCorrelation, 1)}; ${greySameColour.length} grey-confirmed, their colour min ${q(greySameColour, 0, 3)}; compared in ${compared.toFixed(0)} s (${((1000 * compared) / Math.max(1, candidates)).toFixed(2)} ms a candidate)`,
  );
}
console.log(`\n| kind | images | copies | copies caught | distinct pairs | candidates | false positives |\n|---|---|---|---|---|---|---|\n${rows.join('\n')}`);
console.log(`${((performance.now() - started) / 1000).toFixed(0)} s in all`);
