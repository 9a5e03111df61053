/**
 * Deterministic verifier selection: maps the common phrasings of rule-checkable constraints to
 * reference verifier calls (`{func, params}`), with the reference conventions ("at least 3" is
 * [3, 10000], "less than 3" is [0, 2], a keyword list is wrapped once). Anything it does not
 * recognise is left to the Fig. 20 model fallback.
 */
import { constraintType, type ConstraintType } from '../domain/constraints/catalogue.js';
import type { VerifierCall } from '../domain/constraints/compatibility.js';

const MANY = 10000;
const NUMBER_WORDS: Record<string, number> = {
  zero: 0,
  no: 0,
  once: 1,
  one: 1,
  a: 1,
  an: 1,
  single: 1,
  twice: 2,
  two: 2,
  thrice: 3,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
};
const NUM = String.raw`(\d+|zero|one|a|an|single|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty)`;

function toNumber(word: string): number {
  return /^\d+$/.test(word) ? Number(word) : NUMBER_WORDS[word.toLowerCase()]!;
}

/** [lo, hi] for "exactly N", "at least N", "at most N", "between A and B", "fewer than N" before `unit`; first match wins, so "no more than" is tried before "more than". */
function countRange(text: string, unit: string): [number, number] | undefined {
  const u = String.raw`\s+(?:\w+\s+){0,2}?${unit}`;
  const patterns: Array<[RegExp, (m: RegExpExecArray) => [number, number]]> = [
    [new RegExp(String.raw`between\s+${NUM}\s+(?:and|to)\s+${NUM}${u}`, 'i'), (m) => [toNumber(m[1]!), toNumber(m[2]!)]],
    [new RegExp(String.raw`from\s+${NUM}\s+to\s+${NUM}${u}`, 'i'), (m) => [toNumber(m[1]!), toNumber(m[2]!)]],
    [new RegExp(String.raw`${NUM}\s*(?:-|–|to)\s*${NUM}${u}`, 'i'), (m) => [toNumber(m[1]!), toNumber(m[2]!)]],
    [new RegExp(String.raw`(?:at least|no fewer than|a minimum of|minimum of)\s+${NUM}${u}`, 'i'), (m) => [toNumber(m[1]!), MANY]],
    [new RegExp(String.raw`(?:at most|no more than|up to|a maximum of|maximum of|not exceed(?:ing)?)\s+${NUM}${u}`, 'i'), (m) => [0, toNumber(m[1]!)]],
    [new RegExp(String.raw`(?:more than|over)\s+${NUM}${u}`, 'i'), (m) => [toNumber(m[1]!) + 1, MANY]],
    [new RegExp(String.raw`(?:fewer than|less than|under)\s+${NUM}${u}`, 'i'), (m) => [0, toNumber(m[1]!) - 1]],
    [new RegExp(String.raw`(?:exactly|precisely|only|totally use|use|contain|consist of|in)\s+${NUM}${u}`, 'i'), (m) => [toNumber(m[1]!), toNumber(m[1]!)]],
    [new RegExp(String.raw`\b${NUM}${u}`, 'i'), (m) => [toNumber(m[1]!), toNumber(m[1]!)]],
  ];
  for (const [re, read] of patterns) {
    const m = re.exec(text);
    if (m) return read(m);
  }
  return undefined;
}

/** Quoted phrases: 'x', "x", ‘x’, “x”. */
function quoted(text: string): string[] {
  return [...text.matchAll(/'([^']+)'|"([^"]+)"|‘([^’]+)’|“([^”]+)”/g)].map((m) => (m[1] ?? m[2] ?? m[3] ?? m[4])!.trim());
}

const EACH_PARAGRAPH = /\b(each|every|per)\s+paragraph\b/i;

function paragraphs(value: string): VerifierCall[] | undefined {
  if (EACH_PARAGRAPH.test(value)) return undefined;
  const range = countRange(value, 'paragraphs?');
  return range && [{ func: 'check_whether_response_paragraph_number_in_range', params: range }];
}

function sentences(value: string): VerifierCall[] | undefined {
  const range = countRange(value, 'sentences?');
  if (!range) return undefined;
  const func = EACH_PARAGRAPH.test(value) ? 'check_whether_each_paragraph_sentence_number_in_range' : 'check_whether_response_sentence_number_in_range';
  return [{ func, params: range }];
}

function words(value: string): VerifierCall[] | undefined {
  if (/single word or phrase|one word or phrase/i.test(value)) return undefined; // a phrase is not a word count
  const range = countRange(value, 'words?');
  if (!range) return undefined;
  const func = EACH_PARAGRAPH.test(value) ? 'check_whether_each_paragraph_word_count_in_range' : 'check_whether_response_word_count_in_range';
  return [{ func, params: range }];
}

function mentions(value: string): VerifierCall[] | undefined {
  const keywords = quoted(value);
  if (keywords.length === 0 || !/\b(mention|include|use)\b/i.test(value)) return undefined;
  const range = countRange(value, '(?:times?|occurrences?)') ?? timesWord(value) ?? [1, MANY];
  return [{ func: 'check_whether_each_keyword_in_list_mentioned_in_range', params: [keywords, ...range] }];
}

function timesWord(value: string): [number, number] | undefined {
  const m = /\b(at least|exactly|at most)?\s*(once|twice|thrice)\b/i.exec(value);
  if (!m) return undefined;
  const n = toNumber(m[2]!);
  const how = m[1]?.toLowerCase();
  return how === 'exactly' ? [n, n] : how === 'at most' ? [0, n] : [n, MANY];
}

function notMention(value: string): VerifierCall[] | undefined {
  const forbidden = quoted(value);
  if (forbidden.length === 0 || !/\b(do not|don't|never|avoid|without|must not|should not)\b/i.test(value)) return undefined;
  return [{ func: 'check_whether_whole_response_not_contain_certain_substrings', params: [forbidden] }];
}

function prefixSuffix(value: string): VerifierCall[] | undefined {
  const phrases = quoted(value);
  const calls: VerifierCall[] = [];
  const begin = /\b(start|begin|open)s?\b/i.exec(value);
  const end = /\b(end|finish|close|conclude)s?\b/i.exec(value);
  if (phrases.length === 0 || (!begin && !end)) return undefined;
  if (/\b(each|every)\s+(sentence|paragraph)\b/i.test(value)) return undefined; // per-piece affixes: left to the fallback
  if (begin && end && phrases.length >= 2) {
    const beginFirst = begin.index < end.index;
    calls.push({ func: 'check_whether_whole_response_begin_with_certain_substring', params: [beginFirst ? phrases[0]! : phrases[1]!] });
    calls.push({ func: 'check_whether_whole_response_end_with_certain_substring', params: [beginFirst ? phrases[1]! : phrases[0]!] });
  } else if (begin) {
    calls.push({ func: 'check_whether_whole_response_begin_with_certain_substring', params: [phrases[0]!] });
  } else {
    calls.push({ func: 'check_whether_whole_response_end_with_certain_substring', params: [phrases[0]!] });
  }
  return calls;
}

function precision(value: string): VerifierCall[] | undefined {
  if (/\b(do not|don't|avoid|without|no)\b.*\b(numbers?|numerals?|digits?)\b/i.test(value)) {
    return [{ func: 'check_whether_has_no_arabic_number_in_response', params: [] }];
  }
  const decimals = new RegExp(String.raw`${NUM}\s+decimal\s+places?`, 'i').exec(value);
  if (decimals) return [{ func: 'check_number_precision_in_response', params: [toNumber(decimals[1]!)] }];
  if (/\b(whole numbers?|integers?|round (up )?(all )?(the )?numbers)\b/i.test(value)) {
    return [{ func: 'check_number_precision_in_response', params: [0] }];
  }
  return undefined;
}

const PARSERS: Record<string, (value: string) => VerifierCall[] | undefined> = {
  paragraph_number_limit: paragraphs,
  sentence_number_limit: sentences,
  word_count_range_limit: words,
  mention: mentions,
  multiple_mention: mentions,
  not_mention: notMention,
  prefix_and_suffix: prefixSuffix,
  precision,
};

/** Verifier calls for a constraint the parser recognises; undefined when it does not. */
export function parseVerifierCalls(type: string, value: string): VerifierCall[] | undefined {
  const calls = PARSERS[type]?.(value);
  return calls && calls.length > 0 ? calls : undefined;
}

/** The parser's calls for a constraint when they are all among its type's catalogue verifiers; undefined otherwise. */
export function catalogueRuleCalls(type: string, value: string): VerifierCall[] | undefined {
  const calls = parseVerifierCalls(type, value);
  const allowed = constraintType(type)?.verifiers ?? [];
  return calls?.every((c) => allowed.includes(c.func)) ? calls : undefined;
}

/**
 * A type as a multi-turn build offers it: only the examples the parser maps to the type's own
 * verifiers (the prompt shows the first, and models write constraints after it), or undefined when
 * none is. Table 5's "Replace all periods with semicolons." or "Express all numbers greater than
 * 1,000 in scientific notation." would invite a judged instruction that a chat must then drop.
 */
export function codeCheckableOffer(type: ConstraintType): ConstraintType | undefined {
  const examples = type.examples.filter((example) => catalogueRuleCalls(type.key, example) !== undefined);
  return examples.length === 0 ? undefined : { ...type, examples };
}
