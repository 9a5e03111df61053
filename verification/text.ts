/**
 * The text machinery of the reference rule-based verifiers (MM-IFEval's `function_and_compare.py`),
 * with Python 3's semantics reproduced: `str.strip`/`str.split`/`str.splitlines` whitespace, the
 * Unicode `\s`, `\w`, `\d` and `\b` of `re` on str patterns, and `str.lower`. Pure.
 *
 * Exactness: for every code point assigned in Unicode 14 (Python 3.11's `unicodedata`), the classes
 * below equal Python's, and `toLowerCase` equals `str.lower` (final sigma included); this was checked
 * over all 1.1M code points and 50k random sigma contexts. The residual difference: Node 20 takes its
 * character properties from ICU (Unicode 17 here) and Python from its own Unicode version (3.11: 14.0,
 * 3.12: 15.0, 3.13: 15.1), so letters and digits assigned after Python's version are `\w`/`\d` here
 * and not there (and may lowercase here only).
 */
import { sentTokenize } from './sentences.js';

/** `str.isspace()`: what `str.strip()`, `str.split()` and re's `\s` use. JS `\s` differs (it has U+FEFF, lacks U+001C-001F and U+0085). */
const PY_SPACE = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
/** re's `\w`: `str.isalnum()` or `_`, i.e. letters and numbers; no combining marks, no connector but `_` (JS `\w` is ASCII). */
const PY_WORD = '\\p{L}\\p{N}_';
/** re's `\d`: Unicode decimal digits (JS `\d` is ASCII). */
const PY_DIGIT = '\\p{Nd}';
/** re's `\b` built from the Unicode `\w` (JS `\b` is ASCII even with the `u` flag). */
const PY_BOUNDARY = `(?:(?<=[${PY_WORD}])(?![${PY_WORD}])|(?<![${PY_WORD}])(?=[${PY_WORD}]))`;

const CLASS_ESCAPES: Record<string, string> = { s: PY_SPACE, w: PY_WORD, d: PY_DIGIT };

/**
 * Compiles a Python `re` pattern that uses only syntax JS shares (groups, lookarounds, classes,
 * quantifiers) with Python's Unicode meaning of `\s`, `\w`, `\d` and `\b`, so the reference's patterns
 * can be written here verbatim. Always in `u` mode: code points, not UTF-16 units, as in Python.
 * Compiled patterns are cached (as `re` caches them): translating and compiling at every call was
 * two thirds of `mmif verify`'s time. Callers must not rely on `lastIndex` across calls (match and
 * matchAll reset or copy it).
 */
export function pyRegExp(pattern: string, flags = ''): RegExp {
  const key = `${flags}/${pattern}`;
  let compiled = compiledPatterns.get(key);
  if (!compiled) {
    if (compiledPatterns.size >= PATTERN_CACHE_SIZE) compiledPatterns.clear();
    compiledPatterns.set(key, (compiled = new RegExp(translatePattern(pattern), `${flags}u`)));
  }
  return compiled;
}

/** Distinct patterns kept compiled; beyond it the cache starts over (re's own cache works the same way). */
const PATTERN_CACHE_SIZE = 512;
const compiledPatterns = new Map<string, RegExp>();

function translatePattern(pattern: string): string {
  let source = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\') {
      const next = pattern[++i] ?? '';
      const expansion = CLASS_ESCAPES[next];
      if (expansion !== undefined) source += inClass ? expansion : `[${expansion}]`;
      else if (next === 'b' && !inClass) source += PY_BOUNDARY;
      else source += ch + next;
      continue;
    }
    if (ch === '[' && !inClass) inClass = true;
    else if (ch === ']' && inClass) inClass = false;
    source += ch;
  }
  return source;
}

/** `re.escape` for a literal that goes through `pyRegExp`: only what is syntax in JS `u` mode. */
function escapeLiteral(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

const SPACE_CHAR = pyRegExp('\\s');

/** `str.strip()`. Every Python whitespace character is in the BMP, so UTF-16 units are safe here. */
export function pyStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && SPACE_CHAR.test(text[start]!)) start++;
  while (end > start && SPACE_CHAR.test(text[end - 1]!)) end--;
  return text.slice(start, end);
}

const SPACE_RUN = pyRegExp('\\s+');

/** `str.split()` without arguments: runs of whitespace separate, no empty pieces. */
export function pySplit(text: string): string[] {
  return text.split(SPACE_RUN).filter((piece) => piece !== '');
}

/** `str.splitlines()` boundaries. A trailing empty line it would drop is stripped by `cleanText` anyway. */
const LINE_BREAK = /\r\n|[\n\v\f\r\x1c-\x1e\x85\u2028\u2029]/;

/** The reference's `clean_text`: strip every line, join with "\n", strip the result. */
export function cleanText(text: string): string {
  return pyStrip(text.split(LINE_BREAK).map(pyStrip).join('\n'));
}

const PARAGRAPH_BREAK = pyRegExp('\\n\\s*\\n');

/** `re.split(r"\n\s*\n", clean_text(t))` keeping pieces with a non-space: one newline does not separate. */
export function paragraphs(text: string): string[] {
  return cleanText(text)
    .split(PARAGRAPH_BREAK)
    .filter((piece) => pyStrip(piece) !== '');
}

const NOT_WORD_MATERIAL = pyRegExp('[^\\w\\s.-]', 'g');

/**
 * `re.sub(r"[^\w\s.-]", "", t).split()`: the reference's words, counted on the text as given.
 * So "don't" is one word, a lone em-dash vanishes, a lone "-" or "..." is a word.
 */
export function words(text: string): string[] {
  return pySplit(text.replace(NOT_WORD_MATERIAL, ''));
}

/**
 * How often each keyword occurs in `clean_text(t).lower()` as `\b<re.escape(keyword.lower())>\b`
 * (non-overlapping, left to right, as `re.findall`). `toLowerCase` is `str.lower` (see the header).
 * A keyword starting or ending with a non-word character needs a word character beside it, as in Python.
 */
export function keywordCounts(text: string, keywords: readonly string[]): number[] {
  const haystack = cleanText(text).toLowerCase();
  return keywords.map((keyword) => boundedCount(haystack, keyword.toLowerCase()));
}

/**
 * `len(re.findall(r"\b" + re.escape(needle) + r"\b", haystack))` by literal search: the same matches as
 * the regex (V8 cannot search a pattern that starts with a lookbehind by its literal, which made it
 * ~2 ms per call on a 300-word text). An empty needle, or a text with lone surrogates (where code
 * points and UTF-16 units disagree), goes through the regex.
 */
function boundedCount(haystack: string, needle: string): number {
  if (needle === '' || LONE_SURROGATE.test(needle) || LONE_SURROGATE.test(haystack)) {
    return haystack.match(pyRegExp(`\\b${escapeLiteral(needle)}\\b`, 'g'))?.length ?? 0;
  }
  const startsWord = isWordAt(needle, 0);
  const endsWord = isWordBefore(needle, needle.length);
  let count = 0;
  for (let at = haystack.indexOf(needle); at >= 0;) {
    const end = at + needle.length;
    if (isWordBefore(haystack, at) !== startsWord && isWordAt(haystack, end) !== endsWord) {
      count++;
      at = haystack.indexOf(needle, end);
    } else {
      at = haystack.indexOf(needle, at + 1); // no match here: the regex tries the next position
    }
  }
  return count;
}

/** In `u` mode a paired surrogate is one code point, so this finds only unpaired ones. */
const LONE_SURROGATE = /\p{Cs}/u;
const WORD_CHAR_AT = new RegExp(`[${PY_WORD}]`, 'uy');

/** Whether the code point starting at `index` is a word character (false at the end). */
function isWordAt(text: string, index: number): boolean {
  if (index >= text.length) return false;
  WORD_CHAR_AT.lastIndex = index;
  return WORD_CHAR_AT.test(text);
}

/** Whether the code point ending just before `index` is a word character (false at the start). */
function isWordBefore(text: string, index: number): boolean {
  if (index <= 0) return false;
  const low = text.charCodeAt(index - 1);
  const start = index >= 2 && low >= 0xdc00 && low <= 0xdfff && isHighSurrogate(text.charCodeAt(index - 2)) ? index - 2 : index - 1;
  return isWordAt(text, start);
}

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;

/** `nltk.sent_tokenize(clean_text(t))`. */
export function sentences(text: string): string[] {
  return sentTokenize(cleanText(text));
}

/** `nltk.sent_tokenize` of each paragraph, as the per-paragraph sentence checks do. */
export function paragraphSentences(text: string): string[][] {
  return paragraphs(text).map((paragraph) => sentTokenize(paragraph));
}
