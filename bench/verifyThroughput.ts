// Throughput of `mmif verify` (calls mode): 100k JSON lines, a mix of every verifier function over
// realistic 100-300-word responses cut from the IFEval GPT-4 corpus, piped through runVerifyCommand
// in-process; with --child also through a child `npx tsx cli/mmif.ts verify` (once the CLI has it).
//
// Run:   npx tsx bench/verifyThroughput.ts [--lines N] [--child]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { pickOne, rngFor, type Rng } from '../domain/random.js';
import { FUNCTIONS, runVerifierCall } from '../verification/functions.js';
import { runVerifyCommand } from '../verification/verifyCommand.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { lines: { type: 'string', default: '100000' }, child: { type: 'boolean' } } });
const LINES = Number(values.lines);

interface Call {
  func: string;
  params: unknown[];
}

const corpus = readFileSync(resolve(ROOT, '../shared/corpora/ifeval_gpt4_responses.jsonl'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => (JSON.parse(line) as { response: string }).response);

/** A response of `target` words: corpus texts (layout kept) concatenated, then cut after the target-th word. */
function response(rng: Rng, target: number): string {
  const pieces: string[] = [];
  let count = 0;
  while (count < target) {
    for (const piece of pickOne(rng, corpus).split(/(\s+)/)) {
      if (count === target) break;
      pieces.push(piece);
      if (piece.trim() !== '') count++;
    }
    pieces.push('\n\n');
  }
  return pieces.join('').trim();
}

const int = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));
const KEYWORDS = ['the', 'data', 'water', 'history', 'people', 'time', 'city', 'design'];

/** Realistic params for each function, keyed by canonical name. */
const CALLS: Record<string, (rng: Rng) => unknown[]> = {
  check_whether_response_paragraph_number_in_range: (rng) => [int(rng, 1, 4), int(rng, 4, 8)],
  check_whether_response_sentence_number_in_range: (rng) => [int(rng, 3, 8), int(rng, 8, 20)],
  check_whether_each_paragraph_sentence_number_in_range: (rng) => [1, int(rng, 3, 8)],
  check_whether_each_paragraph_sentence_number_in_range_list: (rng) => [[[1, int(rng, 2, 6)], [1, int(rng, 2, 6)], [1, 10]]],
  check_whether_each_paragraph_sentence_number_exceeds: (rng) => [1, int(rng, 4, 9)],
  check_whether_response_word_count_in_range: (rng) => [int(rng, 80, 200), int(rng, 200, 320)],
  check_whether_each_paragraph_word_count_in_range: (rng) => [int(rng, 5, 30), int(rng, 60, 200)],
  check_whether_each_paragraph_word_count_in_range_list: (rng) => [[[10, int(rng, 40, 120)], [10, 200]]],
  check_whether_whole_response_not_contain_certain_substring: (rng) => [pickOne(rng, KEYWORDS)],
  check_whether_whole_response_not_contain_certain_substrings: (rng) => [[pickOne(rng, KEYWORDS), pickOne(rng, KEYWORDS)]],
  check_whether_each_sentence_begin_with_certain_substring: () => ['The'],
  check_whether_each_sentence_end_with_certain_substring: () => ['.'],
  check_whether_whole_response_begin_with_certain_substring: () => ['The'],
  check_whether_whole_response_end_with_certain_substring: () => ['.'],
  check_whether_each_paragraph_begin_with_certain_substring: () => ['*'],
  check_whether_each_paragraph_end_with_certain_substring: () => ['.'],
  check_whether_each_keyword_in_list_mentioned_in_range: (rng) => [[pickOne(rng, KEYWORDS), pickOne(rng, KEYWORDS)], 1, 10000],
  check_whether_total_keyword_in_list_mentioned_in_range: (rng) => [[pickOne(rng, KEYWORDS), pickOne(rng, KEYWORDS)], 2, 20],
  check_number_precision_in_response: (rng) => [int(rng, 0, 2)],
  check_percentage_number_precision_in_response: (rng) => [int(rng, 0, 2)],
  check_whether_has_no_arabic_number_in_response: () => [],
  check_scientific_notation_precision_in_response: (rng) => [int(rng, 2, 4)],
};

function makeCall(rng: Rng): Call {
  const fn = pickOne(rng, FUNCTIONS);
  const params = CALLS[fn.name];
  if (!params) throw new Error(`bench has no params for ${fn.name}`);
  return { func: fn.name, params: params(rng) };
}

function makeLines(count: number): string[] {
  const rng = rngFor('verify-throughput');
  const responses = Array.from({ length: 2000 }, () => response(rng, int(rng, 100, 300)));
  return Array.from({ length: count }, (_, id) => `${JSON.stringify({ id, response: pickOne(rng, responses), ...makeCall(rng) })}\n`);
}

/** Counts output lines without keeping them. */
function lineCounter(): { sink: Writable; lines: () => number } {
  let lines = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const byte of chunk) if (byte === 10) lines++;
      done();
    },
  });
  return { sink, lines: () => lines };
}

function report(label: string, lines: number, ms: number): void {
  console.log(`${label}: ${lines} lines in ${(ms / 1000).toFixed(2)} s = ${Math.round((lines / ms) * 1000)} lines/s`);
}

async function inProcess(input: string[]): Promise<void> {
  const { sink, lines } = lineCounter();
  const start = performance.now();
  const code = await runVerifyCommand([], Readable.from(input), sink);
  report(`in-process (exit ${code})`, lines(), performance.now() - start);
}

async function childProcess(input: string[]): Promise<void> {
  const { sink, lines } = lineCounter();
  const start = performance.now();
  const child = spawn('npx', ['tsx', 'cli/mmif.ts', 'verify'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdout.pipe(sink);
  Readable.from(input).pipe(child.stdin);
  const code = await new Promise<number | null>((done) => child.on('close', done));
  report(`child process (exit ${code}, includes start-up)`, lines(), performance.now() - start);
}

/** Mean time per call of each function over a sample of lines: where the time goes. */
function perFunction(input: string[]): void {
  const totals = new Map<string, { ms: number; calls: number }>();
  for (const line of input.slice(0, 20000)) {
    const { response: text, ...call } = JSON.parse(line) as Call & { response: string };
    const start = performance.now();
    runVerifierCall(text, call);
    const entry = totals.get(call.func) ?? { ms: 0, calls: 0 };
    totals.set(call.func, { ms: entry.ms + performance.now() - start, calls: entry.calls + 1 });
  }
  for (const [func, { ms, calls }] of [...totals].sort((a, b) => b[1].ms / b[1].calls - a[1].ms / a[1].calls)) {
    console.log(`  ${((ms / calls) * 1000).toFixed(1).padStart(7)} µs/call  ${func}`);
  }
}

const input = makeLines(LINES);
console.log(`${input.length} lines, ${(input.reduce((n, l) => n + l.length, 0) / 2 ** 20).toFixed(1)} MiB`);
await inProcess(input);
if (values.child) await childProcess(input);
else console.log('child process: skipped (pass --child to also time `mmif verify` as a child process)');
console.log('per function (first 20k lines, direct calls):');
perFunction(input);
