/**
 * The constraint phrasings the simulator understands. One parsed `Rule` serves three roles:
 * the answer writer follows or breaks it on purpose, the direct judge checks it against a
 * response, and verifier selection maps it to a verification function. Anything else is
 * "unrecognised" and left to chance by the callers.
 *
 * The measures approximate the pipeline's rule functions (blank-line paragraphs, whitespace
 * words, word-boundary keyword counts) closely enough to agree on the simulator's own prose,
 * which avoids the inputs where they differ (abbreviations, dashes, numbers glued to words).
 */

/** Inclusive; `max` is Infinity for "at least N". */
export interface Range {
  min: number;
  max: number;
}

export type Rule =
  | { kind: 'paragraphs'; count: Range }
  | { kind: 'sentencesPerParagraph'; count: Range }
  | { kind: 'sentences'; count: Range }
  | { kind: 'words'; count: Range }
  /** Every phrase must occur `count` times. */
  | { kind: 'mention'; phrases: string[]; count: Range }
  | { kind: 'notMention'; phrases: string[] }
  | { kind: 'startsWith'; phrase: string }
  | { kind: 'endsWith'; phrase: string }
  | { kind: 'precision'; decimals: number }
  | { kind: 'noNumbers' };

// ---------------------------------------------------------------------------------------
// Measures

function paragraphsOf(text: string): string[] {
  return text.split(/\n\s*\n/).filter((paragraph) => paragraph.trim() !== '');
}

/**
 * Splits after . ! ? and whitespace, except before a lowercase word (as Punkt does), so "3.25"
 * and "Once upon a time... the" stay whole.
 */
function sentencesOf(paragraph: string): string[] {
  return paragraph.split(/(?<=[.!?])\s+(?![a-z])/).filter((sentence) => sentence.trim() !== '');
}

export function countWords(text: string): number {
  return text.split(/\s+/).filter((word) => word !== '').length;
}

export function mentionCount(text: string, phrase: string): number {
  const escaped = phrase.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return text.toLowerCase().match(new RegExp(`\\b${escaped}\\b`, 'g'))?.length ?? 0;
}

/** Numbers not glued to a word: "3", "1,234.56", but not the 19 of "COVID-19". */
function numbersIn(text: string): string[] {
  return text.match(/(?<![\w.-])\d[\d,]*(?:\.\d+)?(?!\w)/g) ?? [];
}

function decimalsOf(number: string): number {
  return number.split('.')[1]?.length ?? 0;
}

function within(value: number, range: Range): boolean {
  return value >= range.min && value <= range.max;
}

export function checkRule(rule: Rule, text: string): boolean {
  const paragraphs = paragraphsOf(text);
  switch (rule.kind) {
    case 'paragraphs':
      return within(paragraphs.length, rule.count);
    case 'sentencesPerParagraph':
      return paragraphs.every((paragraph) => within(sentencesOf(paragraph).length, rule.count));
    case 'sentences':
      return within(paragraphs.flatMap(sentencesOf).length, rule.count);
    case 'words':
      return within(countWords(text), rule.count);
    case 'mention':
      return rule.phrases.every((phrase) => within(mentionCount(text, phrase), rule.count));
    case 'notMention':
      return rule.phrases.every((phrase) => mentionCount(text, phrase) === 0);
    case 'startsWith':
      return text.trim().startsWith(rule.phrase);
    case 'endsWith':
      return text.trim().endsWith(rule.phrase);
    case 'precision':
      return numbersIn(text).every((number) => decimalsOf(number) === rule.decimals);
    case 'noNumbers':
      return numbersIn(text).length === 0;
  }
}

// ---------------------------------------------------------------------------------------
// Parsing

/**
 * A quoted phrase. The opening quote may not follow a letter and the closing one may not
 * precede one, so apostrophes ("don't", "Let's") neither open nor close a phrase.
 */
const QUOTED = /(?<!\w)['"‘“](.+?)['"’”](?!\w)/g;
const QUOTE_AFTER_WITH = String.raw`with ['"‘“](.+?)['"’”](?!\w)`;

const NUMBER_WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
  'twenty',
];
const TIMES_WORDS: Record<string, string> = { once: '1 times', twice: '2 times', thrice: '3 times' };

/** Lowercase, quotes blanked out (a quoted keyword must not read as a count), numbers as digits. */
function normalise(constraint: string): string {
  return constraint
    .replace(QUOTED, '""')
    .toLowerCase()
    .replace(/\b(once|twice|thrice)\b/g, (word) => TIMES_WORDS[word] ?? word)
    .replace(new RegExp(`\\b(${NUMBER_WORDS.join('|')})\\b`, 'g'), (word) => String(NUMBER_WORDS.indexOf(word)));
}

const QUALIFIERS: ReadonlyArray<[string, (n: number) => Range]> = [
  ['at least|no fewer than|no less than|not less than|a minimum of', (n) => ({ min: n, max: Infinity })],
  ['more than|over', (n) => ({ min: n + 1, max: Infinity })],
  ['at most|no more than|not more than|up to|a maximum of|not exceed', (n) => ({ min: 0, max: n })],
  ['fewer than|less than|under', (n) => ({ min: 0, max: n - 1 })],
  ['exactly|only|just', (n) => ({ min: n, max: n })],
];

/** "between 2 and 4 UNIT", "2-4 UNIT", "at least 3 UNIT", "exactly 3 UNIT", "3 UNIT" (one adjective may sit between). */
function countRange(text: string, unit: string): Range | undefined {
  const noun = String.raw`(?:[a-z-]+ )?${unit}\b`;
  const between = new RegExp(String.raw`\b(?:between )?(\d+) (?:and|to|-) (\d+) ${noun}`).exec(text.replace(/(\d)-(\d)/g, '$1 - $2'));
  if (between) return { min: Number(between[1]), max: Number(between[2]) };
  for (const [words, toRange] of QUALIFIERS) {
    const match = new RegExp(String.raw`\b(?:${words}) (\d+) ${noun}`).exec(text);
    if (match) return toRange(Number(match[1]));
  }
  const bare = new RegExp(String.raw`\b(\d+) ${noun}`).exec(text);
  return bare ? { min: Number(bare[1]), max: Number(bare[1]) } : undefined;
}

interface Phrasing {
  raw: string;
  text: string;
  phrases: string[];
}

const NEGATED_USE =
  /\b(?:do not|don['’]t|never|avoid|without|must not|should not|cannot|can['’]t)\b.*?\b(?:mention|use|using|include|including|contain|containing|say|saying|write|writing)\b|\bavoid\b/;
const MENTION = /\bmention(?:s|ed|ing)?\b|\b(?:include|use|repeat)s? the (?:words?|phrases?|keywords?|terms?)\b|\bappears?\b/;
const PER_UNIT = /\b(?:each|every|per) (?:paragraph|sentence)\b/;
const NO_NUMBERS = /\b(?:no|not|never|avoid|without)\b.*?\b(?:numbers|digits|numerals|any (?:arabic )?number)\b/;

/** Tried in order; the first match wins, so the more specific phrasings come first. */
const PARSERS: ReadonlyArray<(p: Phrasing) => Rule | undefined> = [
  ({ text, phrases }) => (phrases.length > 0 && NEGATED_USE.test(text) ? { kind: 'notMention', phrases } : undefined),
  ({ text, phrases }) => (phrases.length > 0 && MENTION.test(text) ? { kind: 'mention', phrases, count: countRange(text, 'times?') ?? { min: 1, max: Infinity } } : undefined),
  ({ raw }) => {
    const phrase = anchoredPhrase(raw, 'start|begin');
    return phrase === undefined ? undefined : { kind: 'startsWith', phrase };
  },
  ({ raw }) => {
    const phrase = anchoredPhrase(raw, 'end|finish|conclude');
    return phrase === undefined ? undefined : { kind: 'endsWith', phrase };
  },
  ({ text }) => {
    const places = /\b(\d+|no) decimal places?\b/.exec(text)?.[1];
    if (places !== undefined) return { kind: 'precision', decimals: places === 'no' ? 0 : Number(places) };
    return /\bwhole numbers?\b/.test(text) ? { kind: 'precision', decimals: 0 } : undefined;
  },
  ({ text }) => {
    const count = countRange(text, 'sentences?');
    if (count === undefined) return undefined;
    return /\b(?:each|every|per)\b.*\bparagraphs?\b/.test(text) ? { kind: 'sentencesPerParagraph', count } : { kind: 'sentences', count };
  },
  ({ text }) => {
    const count = countRange(text, 'paragraphs?');
    return count === undefined ? undefined : { kind: 'paragraphs', count };
  },
  ({ text }) => {
    // Per-paragraph or per-sentence word limits are a different rule this simulator does not follow.
    const count = PER_UNIT.test(text) ? undefined : countRange(text, 'words?');
    return count === undefined ? undefined : { kind: 'words', count };
  },
  ({ text }) => (NO_NUMBERS.test(text) ? { kind: 'noNumbers' } : undefined),
];

/** The lead-in of a standing instruction in a chat, before what it asks of every later answer. */
const STANDING = String.raw`(?:(?:from now on|for the rest of (?:this|the) (?:chat|conversation)|henceforth|in (?:every|each) answer),?\s+)?`;

/**
 * "Start your answer with 'X'", "The response should begin with 'X'", and standing chat instructions
 * ("From now on, start every answer with 'X'", as `mmif eval --chats` gives them): anchored
 * at the start, after an optional "from now on", so "End your response with a summary that begins with
 * 'In summary'" is not read as a prefix.
 */
function anchoredPhrase(raw: string, verbs: string): string | undefined {
  const target = String.raw`(?:(?:your|the|every|each|all) )?(?:answers?|responses?|repl(?:y|ies)|outputs?)`;
  const pattern = String.raw`^${STANDING}(?:please\s+)?(?:(?:${verbs})(?: ${target})?|${target} (?:should|must) (?:${verbs})) ${QUOTE_AFTER_WITH}`;
  return new RegExp(pattern, 'i').exec(raw.trim())?.[1];
}

export function parseRule(constraint: string): Rule | undefined {
  const phrasing: Phrasing = {
    raw: constraint,
    text: normalise(constraint),
    phrases: [...constraint.matchAll(QUOTED)].map((match) => match[1] ?? '').filter((phrase) => phrase !== ''),
  };
  for (const parse of PARSERS) {
    const rule = parse(phrasing);
    if (rule) return rule;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------
// Verification functions (paper Table 7)

export interface VerifierCall {
  func: string;
  params: unknown[];
}

/** The reference convention writes an open upper bound as 10000. */
function bounds(range: Range): [number, number] {
  return [range.min, Number.isFinite(range.max) ? range.max : 10000];
}

const call = (func: string, params: unknown[]): VerifierCall => ({ func, params });

/**
 * Acceptable calls in order of preference; the caller takes the first one offered. There are
 * alternatives because the reference code and Table 7 name some functions differently (and
 * the reference misspells "mentioned").
 */
export function verifierCandidates(rule: Rule): VerifierCall[] {
  switch (rule.kind) {
    case 'paragraphs':
      return [call('check_whether_response_paragraph_number_in_range', bounds(rule.count))];
    case 'sentencesPerParagraph':
      return [call('check_whether_each_paragraph_sentence_number_in_range', bounds(rule.count))];
    case 'sentences':
      return [call('check_whether_response_sentence_number_in_range', bounds(rule.count))];
    case 'words':
      return [call('check_whether_response_word_count_in_range', bounds(rule.count))];
    case 'mention':
      return [
        'check_whether_each_keyword_in_list_mentioned_in_range',
        'check_whether_each_keyword_in_list_metioned_in_range',
        'check_whether_keywords_mentioned_in_range',
        'check_whether_keywords_metioned_in_range',
      ].map((func) => call(func, [rule.phrases, ...bounds(rule.count)]));
    case 'notMention': {
      const single = rule.phrases.length === 1 ? [call('check_whether_whole_response_not_contain_certain_substring', rule.phrases)] : [];
      return [...single, call('check_whether_whole_response_not_contain_certain_substrings', [rule.phrases])];
    }
    case 'startsWith':
      return [call('check_whether_whole_response_begin_with_certain_substring', [rule.phrase])];
    case 'endsWith':
      return [call('check_whether_whole_response_end_with_certain_substring', [rule.phrase])];
    case 'precision':
      return [call('check_number_precision_in_response', [rule.decimals])];
    case 'noNumbers':
      return ['check_whether_has_no_arabic_number_in_response', 'check_whether_has_no_number_in_response'].map((func) => call(func, []));
  }
}
