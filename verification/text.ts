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
 */
export function pyRegExp(pattern: string, flags = ''): RegExp {
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
  return new RegExp(source, `${flags}u`);
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
  return cleanText(text).split(PARAGRAPH_BREAK).filter((piece) => pyStrip(piece) !== '');
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
  return keywords.map((keyword) => {
    const pattern = pyRegExp(`\\b${escapeLiteral(keyword.toLowerCase())}\\b`, 'g');
    return haystack.match(pattern)?.length ?? 0;
  });
}

/** `nltk.sent_tokenize(clean_text(t))`. */
export function sentences(text: string): string[] {
  return sentTokenize(cleanText(text));
}

/** `nltk.sent_tokenize` of each paragraph, as the per-paragraph sentence checks do. */
export function paragraphSentences(text: string): string[][] {
  return paragraphs(text).map((paragraph) => sentTokenize(paragraph));
}
