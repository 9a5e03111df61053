/**
 * `mmif verify` call lines over the shared IFEval response corpora (../shared/corpora), using only the
 * functions the reference code has (by its own names, `..._metioned_...` included), with params drawn
 * from the response itself (its words as keywords and prefixes, counts around its own), so verdicts
 * fall on both sides. And a runner for the reference verifiers (bench/reference_verify.py, which
 * imports ../shared/reference, never copied here). Used by bench/verifyThroughput.ts (speed) and
 * bench/referenceVerdicts.ts (the golden verdicts of test/unit/referenceAgreement.test.ts).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pickOne, type Rng } from '../domain/random.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The shared folder (corpora, reference): `--shared DIR`, else `MMIF_SHARED`, else ../shared beside the repo. */
export function sharedDir(flag: string | undefined): string {
  return resolve(ROOT, flag ?? process.env.MMIF_SHARED ?? '../shared');
}

export interface CorpusText {
  id: string;
  text: string;
}

/** Both response corpora, ids `gpt4#<line>` and `bison#<line>`. */
export function corpusTexts(shared: string): CorpusText[] {
  const files = { gpt4: 'ifeval_gpt4_responses.jsonl', bison: 'ifeval_text_bison_responses.jsonl' };
  return Object.entries(files).flatMap(([tag, file]) =>
    readFileSync(join(shared, 'corpora', file), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line, i) => ({ id: `${tag}#${i}`, text: (JSON.parse(line) as { response: string }).response })),
  );
}

export interface Call {
  func: string;
  params: unknown[];
}

const int = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));

/** Whitespace-separated tokens of the text, as a source of keywords and prefixes (punctuation kept sometimes). */
function tokens(text: string): string[] {
  const all = text.split(/\s+/).filter((t) => t !== '');
  return all.length > 0 ? all : ['the'];
}

function keyword(rng: Rng, text: string): string {
  const token = pickOne(rng, tokens(text));
  // Mostly bare words (as constraints name them), sometimes with their punctuation (escaping, \b next to non-word).
  return rng() < 0.8 ? token.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '') || token : token;
}

const PUNCT = ['.', '!', '?', '*', '#', '>', ':', '"'];

/** A prefix or suffix: often one the text really has, else a common mark. */
function affix(rng: Rng, text: string, end: boolean): string {
  if (rng() < 0.5) return pickOne(rng, PUNCT);
  const token = pickOne(rng, tokens(text));
  return end ? token.slice(-int(rng, 1, Math.min(3, token.length))) : token.slice(0, int(rng, 1, token.length));
}

function ranges(rng: Rng, count: number, lo: number, hi: number): [number, number][] {
  return Array.from({ length: count }, () => {
    const a = int(rng, lo, hi);
    return [a, a + int(rng, 0, hi - lo)];
  });
}

/** Params for each reference function, keyed by its reference name. */
const REFERENCE_CALLS: Record<string, (rng: Rng, text: string) => unknown[]> = {
  check_whether_response_paragraph_number_in_range: (rng) => [int(rng, 1, 5), int(rng, 3, 12)],
  check_whether_response_sentence_number_in_range: (rng) => [int(rng, 2, 10), int(rng, 8, 30)],
  check_whether_each_paragraph_sentence_number_in_range: (rng) => [int(rng, 0, 2), int(rng, 2, 8)],
  check_whether_each_paragraph_sentence_number_in_range_list: (rng) => [ranges(rng, int(rng, 1, 4), 0, 5)],
  check_whether_response_word_count_in_range: (rng) => [int(rng, 50, 250), int(rng, 200, 400)],
  check_whether_each_paragraph_word_count_in_range: (rng) => [int(rng, 1, 30), int(rng, 40, 200)],
  check_whether_whole_response_not_contain_certain_substrings: (rng, text) => [[keyword(rng, text), keyword(rng, text)]],
  check_whether_whole_response_not_contain_certain_substring: (rng, text) => [rng() < 0.5 ? keyword(rng, text) : pickOne(rng, [',', ';', '!', '—'])],
  check_whether_each_sentence_begin_with_certain_substring: (rng, text) => [affix(rng, text, false)],
  check_whether_each_paragraph_begin_with_certain_substring: (rng, text) => [affix(rng, text, false)],
  check_whether_each_paragraph_end_with_certain_substring: (rng, text) => [affix(rng, text, true)],
  check_whether_each_sentence_end_with_certain_substring: (rng, text) => [affix(rng, text, true)],
  check_whether_whole_response_begin_with_certain_substring: (rng, text) => [affix(rng, text, false)],
  check_whether_whole_response_end_with_certain_substring: (rng, text) => [affix(rng, text, true)],
  check_whether_each_keyword_in_list_metioned_in_range: (rng, text) => [[keyword(rng, text), keyword(rng, text)], int(rng, 0, 2), int(rng, 1, 6)],
  check_whether_total_keyword_in_list_metioned_in_range: (rng, text) => [[keyword(rng, text), keyword(rng, text), keyword(rng, text)], int(rng, 0, 3), int(rng, 2, 12)],
  check_percentage_number_precision_in_response: (rng) => [int(rng, 0, 2)],
  check_number_precision_in_response: (rng) => [int(rng, 0, 2)],
  check_whether_has_no_arabic_number_in_response: () => [],
};

export const REFERENCE_FUNCTIONS = Object.keys(REFERENCE_CALLS);

export function referenceCall(rng: Rng, func: string, text: string): Call {
  return { func, params: REFERENCE_CALLS[func]!(rng, text) };
}

/**
 * Runs the reference over call lines ({"id", "response", "func", "params"} JSON, one per line) in one
 * Python process; resolves to its output lines and the wall time, start-up included.
 */
export async function runReference(shared: string, input: string, python = resolve(ROOT, 'tools/venv/bin/python')): Promise<{ verdicts: string[]; ms: number }> {
  const reference = join(shared, 'reference');
  const start = performance.now();
  const child = spawn(python, [resolve(ROOT, 'bench/reference_verify.py'), reference], {
    env: { ...process.env, NLTK_DATA_PATH: join(reference, 'nltk_data') },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return collect(child, input, start);
}

/** Runs `mmif verify` as a user would (a fresh process through tsx); resolves to its output lines and wall time. */
export async function runMmifVerify(input: string): Promise<{ verdicts: string[]; ms: number }> {
  const start = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'cli/mmif.ts'), 'verify'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  return collect(child, input, start);
}

async function collect(child: ReturnType<typeof spawn>, input: string, start: number): Promise<{ verdicts: string[]; ms: number }> {
  const chunks: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stdin!.end(input);
  const code = await new Promise<number | null>((done) => child.on('close', done));
  const ms = performance.now() - start;
  if (code !== 0) throw new Error(`${child.spawnfile} exited with ${code}`);
  return {
    verdicts: Buffer.concat(chunks)
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== ''),
    ms,
  };
}
