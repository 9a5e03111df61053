/**
 * The registry of rule-based verifier functions: MM-IFEval's `function_and_compare.py`, verdict for
 * verdict (quirks included), plus the Table 7 functions the reference code lacks (each with a `note`
 * saying how it was defined). A call is `{func, params}` with positional params, as the reference's
 * `func(response, *params)`. Deliberate differences, all on inputs the reference does not handle:
 * params are checked against the signature (a missing, extra or mistyped param is an `{error}` where
 * Python would raise, or silently iterate a bare string's characters), bounds must be JSON numbers,
 * precisions non-negative integers, and absent `params` counts as `[]`.
 */
import { z } from 'zod';
import { keywordCounts, paragraphs, paragraphSentences, pyRegExp, pyStrip, sentences, words } from './text.js';

/**
 * A check's outcome. `vacuous` says the response holds nothing the constraint speaks of (no number
 * for a precision check, no paragraph for a per-paragraph check, an empty response, ...): the
 * reference then passes checks the answer never exercised (`all([])`, a loop over no number), and
 * `passed` keeps that verdict; callers decide whether such a pass counts (verification.vacuous).
 */
export type VerifierOutcome = { passed: boolean; vacuous: boolean } | { error: string };

/** What the verifier-selection prompt lists (it matches prompts' FunctionDescription). */
interface VerifierDescription {
  name: string;
  aliases: readonly string[];
  /** Parameter list as `name:type, ...`. */
  signature: string;
  /** A constraint and the params it yields. */
  example: string;
  /** When a response leaves the check unexercised (its `vacuous` outcome), in words (docs/data-quality.md). */
  vacuity: string;
  /** How a function the reference code lacks was defined. */
  note?: string;
  /**
   * The name MM-IFEval's scorer calls (`globals()[func]`), when it differs from `name`: the reference
   * spells two functions `..._metioned_...`. Unset with a `note`: the reference lacks the function.
   */
  referenceName?: string;
}

interface VerifierFunction extends VerifierDescription {
  /** Validates `params` and runs the check. */
  verify(response: string, params: unknown): VerifierOutcome;
}

interface VerifierSpec<P extends unknown[]> extends Omit<VerifierDescription, 'aliases'> {
  aliases?: string[];
  params: z.ZodType<P>;
  check: (response: string, ...params: P) => boolean;
  /** Whether the response holds nothing this check speaks of (see `vacuity`). */
  vacuous: (response: string) => boolean;
}

/** Names every problem zod found, by its position in the params array. */
export function describeIssues(error: z.ZodError, root: string): string {
  return error.issues.map((issue) => `${[root, ...issue.path.map((p) => `[${String(p)}]`)].join('')}: ${issue.message}`).join('; ');
}

function define<P extends unknown[]>({ params, check, vacuous, aliases = [], ...description }: VerifierSpec<P>): VerifierFunction {
  return {
    ...description,
    aliases,
    verify(response, raw) {
      const parsed = params.safeParse(raw);
      if (!parsed.success) {
        return { error: `${description.name}: bad params ${JSON.stringify(raw)}, expected [${description.signature}]: ${describeIssues(parsed.error, 'params')}` };
      }
      return { passed: check(response, ...parsed.data), vacuous: vacuous(response) };
    },
  };
}

const bound = z.number();
const bounds = z.tuple([bound, bound]);
const ranges = z.tuple([z.array(z.tuple([bound, bound]))]);
const substring = z.tuple([z.string()]);
const substrings = z.tuple([z.array(z.string())]);
const keywordRange = z.tuple([z.array(z.string()), bound, bound]);
const digitCount = z.tuple([z.number().int().min(0)]);
const none = z.tuple([]);

const inRange = (n: number, lower: number, upper: number): boolean => lower <= n && n <= upper;

/** The `_list` checks: exactly one range per paragraph, each count inside its own range. */
const countsInRanges = (counts: number[], list: [number, number][]): boolean => counts.length === list.length && counts.every((n, i) => inRange(n, ...list[i]!));

const paragraphWordCounts = (response: string): number[] => paragraphs(response).map((p) => words(p).length);
const paragraphSentenceCounts = (response: string): number[] => paragraphSentences(response).map((s) => s.length);

/** Code points, as Python's `len`: a decimal digit outside the BMP is one character there. */
const codePointLength = (text: string): number => [...text].length;

/** Digits after the last "." of a numeral, or null without one. */
function decimalPlaces(numeral: string): number | null {
  const dot = numeral.lastIndexOf('.');
  return dot < 0 ? null : codePointLength(numeral.slice(dot + 1));
}

/** The reference's number pattern for precision: signs, 1,234.56, 123.456, .456, 123, exponent, %. */
const PRECISION_NUMBER = pyRegExp(String.raw`(?<!\w)[+-]?(?:\d{1,3}(?:,\d{3})*(?:\.\d+)?|\d+\.\d+|\.\d+|\d+)(?:[eE][+-]?\d+)?%?(?!\w)`, 'g');

/** Every number has exactly `precision` decimals in its mantissa; an integer only passes precision 0. */
function numberPrecision(response: string, precision: number): boolean {
  for (const [numeral] of response.matchAll(PRECISION_NUMBER)) {
    const mantissa = numeral.replaceAll(',', '').replace(/%+$/, '').split(/[eE]/)[0]!;
    if ((decimalPlaces(mantissa) ?? 0) !== precision) return false;
  }
  return true;
}

/** The reference's percentage pattern: no boundary check, spaces allowed before "%". */
const PERCENTAGE = pyRegExp(String.raw`(\d+\.\d+|\d+)\s*%`, 'g');

/** Every number before "%" has a decimal point and exactly `precision` decimals ("50%" always fails). */
function percentagePrecision(response: string, precision: number): boolean {
  for (const [, numeral] of response.matchAll(PERCENTAGE)) {
    if (decimalPlaces(numeral!) !== precision) return false;
  }
  return true;
}

/**
 * The reference's "arabic number" pattern: a number not touching "." or a word character on either
 * side, so "I have 3." has none and "COVID-19" has one. (Its IGNORECASE flag changes nothing here.)
 */
const ARABIC_NUMBER = pyRegExp(String.raw`(?<![.\w])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|\d+\.\d+%?|\d+%?|\d+(?:\.\d+)?(?:[eE][+-]?\d+))(?![.\w])`);

/**
 * Scientific notation, beyond the reference (whose version is commented out and knew only "1.23e5"):
 * a mantissa `\d+(\.\d+)?` not preceded by a word character, then `e`/`E` and a signed exponent, or
 * `×`/`x`/`X`/`*`/`·` (spaces allowed) and 10 raised with `^`, `^{}`, `**` or superscript digits;
 * not followed by a word character.
 */
const SCIENTIFIC = pyRegExp(String.raw`(?<!\w)(\d+(?:\.\d+)?)(?:[eE][+-]?\d+|\s*[×xX*·]\s*10(?:(?:\^|\*\*)(?:[+\-−]?\d+|\{[+\-−]?\d+\})|[⁺⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))(?!\w)`, 'g');

/**
 * Significant digits of a mantissa as the reference's draft counted them: all digits once leading
 * zeros are dropped (trailing zeros count: "1.20" has 3); an all-zero mantissa has 1.
 */
function significantDigits(mantissa: string): number {
  const digits = mantissa.replace('.', '').replace(/^0+/, '');
  return digits === '' ? 1 : codePointLength(digits);
}

/**
 * A number the constraint wants in scientific notation ("for large or small numbers", Table 5) left
 * plain: one of 10,000 or more, one written with thousands separators ("2,500,000"), or a non-zero one
 * under 0.001. Years and ordinary counts (1 to 9999 without separators) are not asked to convert.
 */
function unconvertedNumbers(response: string): string[] {
  const plain = response.replace(SCIENTIFIC, ' ');
  return [...plain.matchAll(PRECISION_NUMBER)]
    .map(([numeral]) => numeral)
    .filter((numeral) => {
      const magnitude = Math.abs(Number(numeral.replaceAll(',', '').replace(/%+$/, '')));
      return magnitude >= 10_000 || numeral.includes(',') || (magnitude > 0 && magnitude < 0.001);
    });
}

/** Every number in scientific notation has exactly `count` significant digits, and no large or small number is left plain. */
function scientificPrecision(response: string, count: number): boolean {
  for (const [, mantissa] of response.matchAll(SCIENTIFIC)) {
    if (significantDigits(mantissa!) !== count) return false;
  }
  return unconvertedNumbers(response).length === 0;
}

/**
 * Vacuity tests (see VerifierSpec.vacuous): the response holds nothing the check speaks of. A
 * response without a letter or a digit ("", "...", "—", a run of punctuation) is content-free: it
 * leaves every structural check (length, paragraphs, sentences, openings, keywords) unexercised,
 * although the reference counts "..." as a word, a sentence and a paragraph.
 */
const CONTENT = /[\p{L}\p{N}]/u;
const CONTENT_FREE = 'the response has no letter or digit (it is empty, or only whitespace and punctuation such as "..." or "—")';
const contentFree = (response: string): boolean => !CONTENT.test(response);
const noNumbers = (response: string): boolean => response.match(PRECISION_NUMBER) === null;
const noPercentages = (response: string): boolean => response.match(PERCENTAGE) === null;
const noScientific = (response: string): boolean => response.match(SCIENTIFIC) === null && unconvertedNumbers(response).length === 0;

/** The registry, in Table 7 order then the code-only functions. */
export const FUNCTIONS: readonly VerifierFunction[] = [
  define({
    name: 'check_whether_response_paragraph_number_in_range',
    signature: 'lower_bound:int, upper_bound:int',
    example: '"at least 3 paragraphs" -> [3, 10000]',
    params: bounds,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, lower, upper) => inRange(paragraphs(response).length, lower, upper),
  }),
  define({
    name: 'check_whether_response_sentence_number_in_range',
    signature: 'lower_bound:int, upper_bound:int',
    example: '"exactly 3 sentences" -> [3, 3]',
    params: bounds,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, lower, upper) => inRange(sentences(response).length, lower, upper),
  }),
  define({
    name: 'check_whether_each_paragraph_sentence_number_in_range',
    signature: 'lower_bound:int, upper_bound:int',
    example: '"fewer than 3 sentences in each paragraph" -> [0, 2]',
    params: bounds,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, lower, upper) => paragraphSentenceCounts(response).every((n) => inRange(n, lower, upper)),
  }),
  define({
    name: 'check_whether_each_paragraph_sentence_number_in_range_list',
    signature: 'ranges:List[[int, int]]',
    example: '"exactly 3 sentences in the first paragraph, 1 to 2 in the second" -> [[[3, 3], [1, 2]]]',
    params: ranges,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, list) => countsInRanges(paragraphSentenceCounts(response), list),
  }),
  define({
    name: 'check_whether_each_paragraph_sentence_number_exceeds',
    signature: 'exceed_num:int, upper_bound:int',
    example: '"each paragraph has 1 sentence more than the previous one, none more than 7" -> [1, 7]',
    note: 'Table 7 only, not in the reference code: every paragraph has exactly exceed_num sentences more than the one before it, and none has more than upper_bound.',
    params: bounds,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, exceed, upper) => {
      const counts = paragraphSentenceCounts(response);
      return counts.every((n, i) => n <= upper && (i === 0 || n - counts[i - 1]! === exceed));
    },
  }),
  define({
    name: 'check_whether_response_word_count_in_range',
    signature: 'lower_bound:int, upper_bound:int',
    example: '"between 50 and 80 words" -> [50, 80]',
    params: bounds,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, lower, upper) => inRange(words(response).length, lower, upper),
  }),
  define({
    name: 'check_whether_each_paragraph_word_count_in_range',
    signature: 'lower_bound:int, upper_bound:int',
    example: '"each paragraph between 50 and 80 words" -> [50, 80]',
    params: bounds,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, lower, upper) => paragraphWordCounts(response).every((n) => inRange(n, lower, upper)),
  }),
  define({
    name: 'check_whether_each_paragraph_word_count_in_range_list',
    signature: 'ranges:List[[int, int]]',
    example: '"20 to 30 words in the first paragraph, 50 to 80 in the second" -> [[[20, 30], [50, 80]]]',
    note: 'Table 7 only, not in the reference code: defined as the sentence _list check with the reference word count.',
    params: ranges,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, list) => countsInRanges(paragraphWordCounts(response), list),
  }),
  define({
    name: 'check_whether_whole_response_not_contain_certain_substring',
    signature: 'substring:str',
    example: '"do not use the word apple" -> ["apple"]',
    params: substring,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, text) => !response.includes(text),
  }),
  define({
    name: 'check_whether_whole_response_not_contain_certain_substrings',
    signature: 'substrings:List[str]',
    example: '"do not mention apple or banana" -> [["apple", "banana"]]',
    params: substrings,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, list) => list.every((text) => !response.includes(text)),
  }),
  define({
    name: 'check_whether_each_sentence_begin_with_certain_substring',
    signature: 'substring:str',
    example: '"start every sentence with an exclamation point" -> ["!"]',
    params: substring,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, text) => sentences(response).every((s) => s.startsWith(text)),
  }),
  define({
    name: 'check_whether_each_sentence_end_with_certain_substring',
    signature: 'substring:str',
    example: '"end every sentence with a question mark" -> ["?"]',
    params: substring,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, text) => sentences(response).every((s) => s.endsWith(text)),
  }),
  define({
    name: 'check_whether_whole_response_begin_with_certain_substring',
    signature: 'substring:str',
    example: '"start your answer with \'Once upon a time\'" -> ["Once upon a time"]',
    params: substring,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, text) => pyStrip(response).startsWith(text),
  }),
  define({
    name: 'check_whether_whole_response_end_with_certain_substring',
    signature: 'substring:str',
    example: '"end your answer with \'The end.\'" -> ["The end."]',
    params: substring,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, text) => pyStrip(response).endsWith(text),
  }),
  define({
    name: 'check_whether_each_keyword_in_list_mentioned_in_range',
    referenceName: 'check_whether_each_keyword_in_list_metioned_in_range',
    aliases: ['check_whether_each_keyword_in_list_metioned_in_range', 'check_whether_keywords_metioned_in_range', 'check_whether_keywords_mentioned_in_range'],
    signature: 'keywords:List[str], lower_bound_times:int, upper_bound_times:int',
    example: '"mention apple and banana at least 3 times each" -> [["apple", "banana"], 3, 10000]',
    params: keywordRange,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, keywords, lower, upper) => keywordCounts(response, keywords).every((n) => inRange(n, lower, upper)),
  }),
  define({
    name: 'check_whether_total_keyword_in_list_mentioned_in_range',
    referenceName: 'check_whether_total_keyword_in_list_metioned_in_range',
    aliases: ['check_whether_total_keyword_in_list_metioned_in_range'],
    signature: 'keywords:List[str], lower_bound_times:int, upper_bound_times:int',
    example: '"mention apple or banana 2 to 4 times in total" -> [["apple", "banana"], 2, 4]',
    params: keywordRange,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, keywords, lower, upper) =>
      inRange(
        keywordCounts(response, keywords).reduce((a, b) => a + b, 0),
        lower,
        upper,
      ),
  }),
  define({
    name: 'check_number_precision_in_response',
    signature: 'precision:int',
    example: '"keep two decimal places for all numbers" -> [2]',
    params: digitCount,
    vacuity: 'the response has no number (the reference passes it)',
    vacuous: noNumbers,
    check: numberPrecision,
  }),
  define({
    name: 'check_whether_has_no_arabic_number_in_response',
    aliases: ['check_whether_has_no_number_in_response'],
    signature: '',
    example: '"do not use any arabic numerals" -> []',
    params: none,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response) => !ARABIC_NUMBER.test(response),
  }),
  define({
    name: 'check_scientific_notation_precision_in_response',
    signature: 'significant_digits:int',
    example: '"write numbers in scientific notation with 3 significant digits" -> [3]',
    note: 'Table 7 only (commented out in the reference code): every number in scientific notation (1.23e5, 1.23 × 10^5, 1.23x10^5, 1.23·10⁵) has exactly significant_digits significant digits in its mantissa, leading zeros excluded, trailing zeros included; a large or small number left plain (10,000 or more, written with thousands separators, or non-zero under 0.001) fails; other plain numbers (years, counts) are not checked, so a text without any number passes.',
    params: digitCount,
    vacuity: 'the response has no number in scientific notation and no large or small number left plain',
    vacuous: noScientific,
    check: scientificPrecision,
  }),
  define({
    name: 'check_whether_each_paragraph_begin_with_certain_substring',
    signature: 'substring:str',
    example: '"start every paragraph with \'>\'" -> [">"]',
    params: substring,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, text) => paragraphs(response).every((p) => p.startsWith(text)),
  }),
  define({
    name: 'check_whether_each_paragraph_end_with_certain_substring',
    signature: 'substring:str',
    example: '"end every paragraph with \'~\'" -> ["~"]',
    params: substring,
    vacuity: CONTENT_FREE,
    vacuous: contentFree,
    check: (response, text) => paragraphs(response).every((p) => p.endsWith(text)),
  }),
  define({
    name: 'check_percentage_number_precision_in_response',
    aliases: ['check_percentage_precision_in_response'],
    signature: 'precision:int',
    example: '"give percentages with two decimal places" -> [2]',
    params: digitCount,
    vacuity: 'the response has no percentage (the reference passes it)',
    vacuous: noPercentages,
    check: percentagePrecision,
  }),
];

const BY_NAME = new Map(FUNCTIONS.flatMap((fn) => [fn.name, ...fn.aliases].map((name) => [name, fn] as const)));

/** The function a reference name, canonical name or alias denotes. */
export function resolveFunction(name: string): VerifierFunction | undefined {
  return BY_NAME.get(name);
}

/**
 * The name a call is written out under: the reference scorer's spelling for the functions it has
 * (whatever alias chose them), our canonical name for the functions beyond it, and an unknown name
 * unchanged (the verification plan never keeps one, so this is only for foreign input).
 */
export function writtenFunctionName(name: string): string {
  const fn = resolveFunction(name);
  return fn ? (fn.referenceName ?? fn.name) : name;
}

/** Whether MM-IFEval's scorer can call this function by name (it exists in the reference code). */
export function inReferenceScorer(name: string): boolean {
  const fn = resolveFunction(name);
  return fn !== undefined && fn.note === undefined;
}

/**
 * Runs one `{func, params}` call (a `VerifierCall`, or any parsed JSON object) on a response. Never throws: an unknown function, bad params or a
 * failure inside a check becomes `{error}` naming the function and the problem.
 */
export function runVerifierCall(response: string, call: { func?: unknown; params?: unknown }): VerifierOutcome {
  if (typeof call.func !== 'string') return { error: `func must be a function name, got ${JSON.stringify(call.func) ?? 'nothing'}` };
  const fn = resolveFunction(call.func);
  if (!fn) return { error: `unknown verifier function '${call.func}'` };
  try {
    return fn.verify(response, call.params ?? []);
  } catch (err) {
    return { error: `${fn.name}: ${err instanceof Error ? err.message : String(err)}` };
  }
}
