// `mmif verify` against the reference verifiers it reimplements, side by side in one run: the same
// call lines (every reference function, params drawn from each response, bench/referenceMix.ts) over
// the shared IFEval response corpora, through the reference in one Python process
// (bench/reference_verify.py) and through `mmif verify` in a fresh Node process (tsx), each timed from
// spawn to exit (start-up included). Checks that every verdict is identical, prints both throughputs
// and the ratio, then where ours spends its time per function (direct calls, in-process).
//
// Run:   npx tsx bench/verifyThroughput.ts [--lines 200000] [--repeat 3] [--only regex] [--shared DIR]
// Needs tools/venv with nltk and python-dotenv (`bash tools/install.sh dev`).
import { parseArgs } from 'node:util';
import { pickOne, rngFor } from '../domain/random.js';
import { runVerifierCall } from '../verification/functions.js';
import { corpusTexts, REFERENCE_FUNCTIONS, referenceCall, runMmifVerify, runReference, sharedDir, type Call } from './referenceMix.js';

const { values } = parseArgs({
  options: {
    lines: { type: 'string', default: '200000' },
    repeat: { type: 'string', default: '1' },
    only: { type: 'string' },
    shared: { type: 'string' },
  },
});
const LINES = Number(values.lines);
const shared = sharedDir(values.shared);

/** The functions whose whole work is a regular expression over the response. */
const REGEX_FUNCTIONS = [
  'check_whether_each_keyword_in_list_metioned_in_range',
  'check_whether_total_keyword_in_list_metioned_in_range',
  'check_percentage_number_precision_in_response',
  'check_number_precision_in_response',
  'check_whether_has_no_arabic_number_in_response',
];
const functions = values.only === 'regex' ? REGEX_FUNCTIONS : REFERENCE_FUNCTIONS;

const texts = corpusTexts(shared);
const rng = rngFor('verify-throughput');
const calls: (Call & { id: number; response: string })[] = Array.from({ length: LINES }, (_, id) => {
  const { text } = pickOne(rng, texts);
  return { id, response: text, ...referenceCall(rng, functions[id % functions.length]!, text) };
});
const input = calls.map((c) => `${JSON.stringify(c)}\n`).join('');
console.log(`${LINES} lines (${functions.length} functions, ${(input.length / 2 ** 20).toFixed(0)} MiB) over ${texts.length} corpus responses`);

const rate = (ms: number): number => Math.round((LINES / ms) * 1000);
for (let round = 1; round <= Number(values.repeat); round++) {
  const reference = await runReference(shared, input);
  const ours = await runMmifVerify(input);
  // `vacuous` is ours, on top of the reference's verdict (docs/data-quality.md): the reference's lines have no such field.
  const withoutVacuous = (line: string): string => JSON.stringify({ ...(JSON.parse(line) as object), vacuous: undefined });
  const same = (a: string, b: string | undefined): boolean => b !== undefined && withoutVacuous(a) === withoutVacuous(b);
  const differing = ours.verdicts.filter((line, i) => !same(line, reference.verdicts[i])).length;
  if (ours.verdicts.length !== LINES || reference.verdicts.length !== LINES || differing > 0) {
    throw new Error(`verdicts differ: ${differing} of ${LINES} lines (ours ${ours.verdicts.length}, reference ${reference.verdicts.length} lines)`);
  }
  console.log(
    `round ${round}: reference ${(reference.ms / 1000).toFixed(2)} s (${rate(reference.ms)} lines/s), ` +
      `mmif verify ${(ours.ms / 1000).toFixed(2)} s (${rate(ours.ms)} lines/s): ` +
      `ratio ${(reference.ms / ours.ms).toFixed(2)}x, all ${LINES} verdicts identical`,
  );
}

// Where the time goes: mean time per call of each function, direct calls in this process.
const totals = new Map<string, { ms: number; calls: number }>();
for (const call of calls.slice(0, 20000)) {
  const start = performance.now();
  runVerifierCall(call.response, call);
  const entry = totals.get(call.func) ?? { ms: 0, calls: 0 };
  totals.set(call.func, { ms: entry.ms + performance.now() - start, calls: entry.calls + 1 });
}
console.log('per function (first 20k lines, direct calls in this process):');
for (const [func, { ms, calls: n }] of [...totals].sort((a, b) => b[1].ms / b[1].calls - a[1].ms / a[1].calls)) {
  console.log(`  ${((ms / n) * 1000).toFixed(1).padStart(7)} µs/call  ${func}`);
}
