// Punkt sentence tokenizer (Kiss & Strunk 2006): a TypeScript port of the sentence-splitting half of
// NLTK's nltk/tokenize/punkt.py (NLTK 3.10.4, Apache-2.0; authors credited there: Willy, Steven Bird,
// Edward Loper, Joel Nothman, Arthur Darcet, Tom Aarsen). It reproduces
// `PunktSentenceTokenizer.tokenize(text)` — i.e. `nltk.sent_tokenize(text)` given the parameters of a
// punkt_tab model — decision for decision; a `PunktBehaviour` selects the (small) differences of
// NLTK 3.10.2–3.10.3 and of 3.10.1 and earlier. Training is not ported. No I/O: the parameters are
// passed in.
// How Python's `regex`/`re`/`str` semantics are translated to JavaScript: PORTING.md beside this file.

/** Parameters of a trained Punkt model (the four tables of an NLTK punkt_tab directory). */
export interface PunktParams {
  /** Abbreviation types, lower case, without their final period (abbrev_types.txt). */
  abbrevTypes: Iterable<string>;
  /** Collocation pairs (type before the period, type after) (collocations.tab). */
  collocations: Iterable<readonly [string, string]>;
  /** Frequent sentence starters (sent_starters.txt). */
  sentStarters: Iterable<string>;
  /** Orthographic context flags by type (ortho_context.tab). */
  orthoContext: Record<string, number> | ReadonlyMap<string, number>;
}

// Orthographic context flags (punkt.py _ORTHO_*).
const ORTHO_BEG_UC = 1 << 1;
const ORTHO_MID_UC = 1 << 2;
const ORTHO_UNK_UC = 1 << 3;
const ORTHO_BEG_LC = 1 << 4;
const ORTHO_MID_LC = 1 << 5;
const ORTHO_UNK_LC = 1 << 6;
const ORTHO_UC = ORTHO_BEG_UC + ORTHO_MID_UC + ORTHO_UNK_UC;
const ORTHO_LC = ORTHO_BEG_LC + ORTHO_MID_LC + ORTHO_UNK_LC;

/**
 * Which NLTK release's sentence splitting to reproduce. Two changes since NLTK 3.8.1 alter the result
 * (the tokenization code of 3.8.1, 3.9.1–3.9.4, 3.10.0 and 3.10.1 is identical; 3.8.1 and older load
 * the same tables from the pickled `punkt` model instead of `punkt_tab`):
 * - "nltk-3.10.4" (3.10.4, the current PyPI release; the default): everything below.
 * - "nltk-3.10.2" (3.10.2 and 3.10.3): curly quotes ‘’“” and guillemets «» count as closing punctuation
 *   (in the period context's non-word characters and in boundary realignment); patterns run on the
 *   stdlib `re` engine. 3.10.4 moved them to the third-party `regex` engine (nltk.redos), whose `\s` no
 *   longer matches U+001C..U+001F and whose `\w` counts combining marks but not No/Nl numerals.
 * - "nltk-3.10.1" (3.10.1 and earlier: 3.10.0, 3.9.x, 3.8.x): ASCII quotes only, `re` engine.
 */
export type PunktBehaviour = 'nltk-3.10.4' | 'nltk-3.10.2' | 'nltk-3.10.1';
export const PUNKT_BEHAVIOURS: readonly PunktBehaviour[] = ['nltk-3.10.4', 'nltk-3.10.2', 'nltk-3.10.1'];
export const DEFAULT_PUNKT_BEHAVIOUR: PunktBehaviour = 'nltk-3.10.4';

/** The compiled patterns of one behaviour (PunktLanguageVars + PunktToken regexes). */
interface Patterns {
  wordTokenizer: RegExp;
  periodContext: RegExp;
  boundaryRealignment: RegExp;
  initial: RegExp;
}

// Python `str.isspace()` characters (= stdlib `re` `\s`); `regex` `\s` (Unicode White_Space) lacks
// U+001C..U+001F. Both lack U+FEFF, which JS `\s` has, and have U+0085, which JS `\s` lacks.
const PY_SPACE_BODY = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const WHITE_SPACE_BODY = '\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const CURLY = '\\u2018\\u2019\\u201c\\u201d\\xab\\xbb';
// PunktLanguageVars._re_word_start
const WORD_START = '[^("`{\\[:;&#*@)}\\]\\-,]';
// `[^\W\d]`: `regex` \w = [\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]; `re` \w = str.isalnum() or
// "_" = [\p{L}\p{N}_] (modulo Unicode version); \d = \p{Nd} in both.
const LETTER_REGEX = '[\\p{Alphabetic}\\p{M}\\p{Pc}\\p{Join_Control}]';
const LETTER_RE = '[\\p{L}\\p{Nl}\\p{No}_]';

const patternCache = new Map<PunktBehaviour, Patterns>();

function patternsFor(behaviour: PunktBehaviour): Patterns {
  const cached = patternCache.get(behaviour);
  if (cached) return cached;
  const regexEngine = behaviour === 'nltk-3.10.4';
  const curly = behaviour !== 'nltk-3.10.1' ? CURLY : '';
  const wsBody = regexEngine ? WHITE_SPACE_BODY : PY_SPACE_BODY;
  const WS = `[${wsBody}]`;
  const NWS = `[^${wsBody}]`;
  // PunktLanguageVars._re_non_word_chars (sent_end_chars minus ".", i.e. "?!", appended).
  const NON_WORD = `[)";}\\]*:@'({\\[${curly}?!]`;
  // PunktLanguageVars._re_multi_char_punct
  const MULTI_CHAR = `(?:-{2,}|\\.{2,}|(?:\\.${WS}){2,}\\.)`;
  const p: Patterns = {
    // PunktLanguageVars._word_tokenize_fmt (applied to single lines, which contain no "\n").
    wordTokenizer: new RegExp(`${MULTI_CHAR}` + `|(?=${WORD_START})${NWS}+?(?=${WS}|$|${NON_WORD}|${MULTI_CHAR}|,(?=$|${WS}|${NON_WORD}|${MULTI_CHAR}))` + `|${NWS}`, 'gu'),
    // PunktLanguageVars._period_context_fmt: group 1 = after_tok, group 2 = next_tok.
    periodContext: new RegExp(`[.?!](?=(${NON_WORD}|${WS}+(${NWS}+)))`, 'gu'),
    // PunktLanguageVars.re_boundary_realignment (MULTILINE `$` → `(?=\n|$)`), used with .match().
    boundaryRealignment: new RegExp(`^["')\\]}${curly}]+?(?:${WS}+|(?=--)|(?=\\n|$))`, 'u'),
    // PunktToken._RE_INITIAL, used with .match().
    initial: new RegExp(`^${regexEngine ? LETTER_REGEX : LETTER_RE}\\.$`, 'u'),
  };
  patternCache.set(behaviour, p);
  return p;
}

// PunktToken regexes that do not depend on the behaviour.
const RE_ELLIPSIS = /^\.\.+$/;
const RE_NUMERIC = /^-?[.,]?\p{Nd}[\p{Nd},.-]*\.?$/u;
const RE_UPPER = /^\p{Uppercase}$/u;
const RE_LOWER = /^\p{Lowercase}$/u;

/** Python str.isspace() characters (what str.strip()/rstrip() remove). */
const PY_SPACE_RE = new RegExp(`[${PY_SPACE_BODY}]`);
const PY_STRIPPED_NONEMPTY = new RegExp(`[^${PY_SPACE_BODY}]`);

/** Python `s.rstrip()` length. */
function pyRstripLength(s: string): number {
  let end = s.length;
  while (end > 0 && PY_SPACE_RE.test(s[end - 1]!)) end--;
  return end;
}

/** Python `string.whitespace`. */
function isAsciiWhitespace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13);
}

function firstChar(s: string): string {
  return String.fromCodePoint(s.codePointAt(0)!);
}

/** PunktToken (only what sentence splitting uses). */
class Token {
  readonly tok: string;
  readonly type: string;
  readonly periodFinal: boolean;
  sentbreak = false;
  abbr = false;
  ellipsis = false;

  constructor(tok: string) {
    this.tok = tok;
    const lower = tok.toLowerCase();
    this.type = RE_NUMERIC.test(lower) ? '##number##' : lower;
    this.periodFinal = tok.endsWith('.');
  }

  get typeNoPeriod(): string {
    const t = this.type;
    return t.length > 1 && t.endsWith('.') ? t.slice(0, -1) : t;
  }

  get typeNoSentperiod(): string {
    return this.sentbreak ? this.typeNoPeriod : this.type;
  }

  get firstUpper(): boolean {
    return RE_UPPER.test(firstChar(this.tok));
  }

  get firstLower(): boolean {
    return RE_LOWER.test(firstChar(this.tok));
  }

  get isEllipsis(): boolean {
    return RE_ELLIPSIS.test(this.tok);
  }
}

/** A [start, end) span of a sentence, in UTF-16 offsets of the text. */
type Span = readonly [start: number, end: number];

interface EndContext {
  /** Offset of the sentence-end character ([.?!]); match.end() is this + 1. */
  index: number;
  /** Offset of the next token after the whitespace, or -1 when the period is followed by punctuation. */
  nextTokStart: number;
  /** The decision text: previous word + end char + after_tok. */
  context: string;
}

const SENT_END_CHARS = new Set(['.', '?', '!']);
const PUNCTUATION = new Set([';', ':', ',', '.', '!', '?']);

/**
 * NLTK's PunktSentenceTokenizer with fixed parameters (sentence splitting only).
 * `tokenize(text)` equals Python's `PunktSentenceTokenizer(params).tokenize(text)` under the NLTK
 * release named by `behaviour` (default: 3.10.4).
 */
export class PunktSentenceTokenizer {
  private readonly abbrevTypes: ReadonlySet<string>;
  private readonly collocations: ReadonlyMap<string, ReadonlySet<string>>;
  private readonly sentStarters: ReadonlySet<string>;
  private readonly orthoContext: ReadonlyMap<string, number>;
  private readonly re: Patterns;
  /** The NLTK release whose behaviour this tokenizer reproduces. */
  readonly behaviour: PunktBehaviour;

  constructor(params: PunktParams, behaviour: PunktBehaviour = DEFAULT_PUNKT_BEHAVIOUR) {
    if (!PUNKT_BEHAVIOURS.includes(behaviour)) throw new Error(`unknown Punkt behaviour ${String(behaviour)}`);
    this.behaviour = behaviour;
    this.re = patternsFor(behaviour);
    this.abbrevTypes = new Set(params.abbrevTypes);
    const colloc = new Map<string, Set<string>>();
    for (const [a, b] of params.collocations) {
      let set = colloc.get(a);
      if (!set) colloc.set(a, (set = new Set()));
      set.add(b);
    }
    this.collocations = colloc;
    this.sentStarters = new Set(params.sentStarters);
    const oc = params.orthoContext;
    this.orthoContext = isReadonlyMap(oc) ? new Map(oc) : new Map(Object.entries(oc));
  }

  /** Python `tokenize(text, realign_boundaries)`: the sentences of `text`. */
  tokenize(text: string, realignBoundaries = true): string[] {
    return this.spanTokenize(text, realignBoundaries).map(([s, e]) => text.slice(s, e));
  }

  /** Python `span_tokenize`: sentence spans as UTF-16 offsets (Python's are code-point offsets). */
  spanTokenize(text: string, realignBoundaries = true): Span[] {
    const slices = this.slicesFromText(text);
    return realignBoundaries ? this.realignBoundaries(text, slices) : slices;
  }

  /** Python `_slices_from_text`. */
  private slicesFromText(text: string): Span[] {
    const out: Span[] = [];
    let lastBreak = 0;
    for (const m of this.matchPotentialEndContexts(text)) {
      if (this.textContainsSentbreak(m.context)) {
        out.push([lastBreak, m.index + 1]);
        // next sentence starts after whitespace, or at the following punctuation
        lastBreak = m.nextTokStart >= 0 ? m.nextTokStart : m.index + 1;
      }
    }
    // The last sentence should not contain trailing whitespace.
    out.push([lastBreak, pyRstripLength(text)]);
    return out;
  }

  /** Python `_match_potential_end_contexts` (including its overlap handling quirks). */
  private matchPotentialEndContexts(text: string): EndContext[] {
    const out: EndContext[] = [];
    let prevStart = 0; // previous_slice
    let prevStop = 0;
    let prev: { index: number; afterTok: string; nextTokStart: number } | undefined;
    const re = this.re.periodContext;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const start = m.index;
      // _get_last_whitespace_index(text[prevStop:start]): 0 when none (or when it is at index 0)
      let lastWs = 0;
      for (let i = start - 1; i >= prevStop; i--) {
        if (isAsciiWhitespace(text.charCodeAt(i))) {
          lastWs = i - prevStop;
          break;
        }
      }
      const wordStart = lastWs ? lastWs + prevStop + 1 : prevStart;
      if (prev && prevStop <= wordStart) {
        out.push({
          index: prev.index,
          nextTokStart: prev.nextTokStart,
          context: text.slice(prevStart, prevStop) + text[prev.index]! + prev.afterTok,
        });
      }
      const afterTok = m[1]!;
      const nextTok = m[2];
      prev = {
        index: start,
        afterTok,
        nextTokStart: nextTok === undefined ? -1 : start + 1 + afterTok.length - nextTok.length,
      };
      prevStart = wordStart;
      prevStop = start;
    }
    if (prev) {
      out.push({
        index: prev.index,
        nextTokStart: prev.nextTokStart,
        context: text.slice(prevStart, prevStop) + text[prev.index]! + prev.afterTok,
      });
    }
    return out;
  }

  /** Python `_realign_boundaries`. */
  private realignBoundaries(text: string, slices: Span[]): Span[] {
    const out: Span[] = [];
    let realign = 0;
    for (let i = 0; i < slices.length; i++) {
      const s1 = slices[i]!;
      const start = s1[0] + realign;
      const stop = s1[1];
      const s2 = slices[i + 1];
      if (!s2) {
        if (start < stop) out.push([start, stop]);
        continue;
      }
      const m = this.re.boundaryRealignment.exec(text.slice(s2[0], s2[1]));
      if (m) {
        out.push([start, s2[0] + pyRstripLength(m[0])]);
        realign = m[0].length;
      } else {
        realign = 0;
        if (start < stop) out.push([start, stop]);
      }
    }
    return out;
  }

  /** Python `text_contains_sentbreak`: a sentence break followed by at least one more token. */
  textContainsSentbreak(text: string): boolean {
    const tokens = this.tokenizeWords(text);
    // First pass, then the second pass in order (token i sees token i+1 after its first pass only).
    for (const t of tokens) this.firstPassAnnotation(t);
    for (let i = 0; i + 1 < tokens.length; i++) {
      const t = tokens[i]!;
      this.secondPassAnnotation(t, tokens[i + 1]!);
      if (t.sentbreak) return true;
    }
    return false;
  }

  /** Python `_tokenize_words` (the paragraph/line-start flags are not used when tokenizing). */
  private tokenizeWords(plaintext: string): Token[] {
    const tokens: Token[] = [];
    for (const line of plaintext.split('\n')) {
      if (!PY_STRIPPED_NONEMPTY.test(line)) continue; // `if line.strip():`
      const re = this.re.wordTokenizer;
      re.lastIndex = 0;
      for (let m = re.exec(line); m !== null; m = re.exec(line)) tokens.push(new Token(m[0]));
    }
    return tokens;
  }

  /** Python `_first_pass_annotation`. */
  private firstPassAnnotation(t: Token): void {
    const tok = t.tok;
    if (SENT_END_CHARS.has(tok)) {
      t.sentbreak = true;
    } else if (t.isEllipsis) {
      t.ellipsis = true;
    } else if (t.periodFinal && !tok.endsWith('..')) {
      const base = tok.slice(0, -1).toLowerCase();
      const dash = base.lastIndexOf('-');
      if (this.abbrevTypes.has(base) || (dash >= 0 && this.abbrevTypes.has(base.slice(dash + 1)))) {
        t.abbr = true;
      } else {
        t.sentbreak = true;
      }
    }
  }

  /** Python `_second_pass_annotation` (updates t1). */
  private secondPassAnnotation(t1: Token, t2: Token): void {
    if (!t1.periodFinal) return;
    const typ = t1.typeNoPeriod;
    const nextTyp = t2.typeNoSentperiod;
    const tokIsInitial = this.re.initial.test(t1.tok);

    // [4.1.2. Collocation Heuristic]
    if (this.collocations.get(typ)?.has(nextTyp)) {
      t1.sentbreak = false;
      t1.abbr = true;
      return;
    }

    // [4.2. Token-Based Reclassification of Abbreviations]
    if ((t1.abbr || t1.ellipsis) && !tokIsInitial) {
      const isSentStarter = this.orthoHeuristic(t2);
      if (isSentStarter === true) {
        t1.sentbreak = true;
        return;
      }
      // [4.1.3. Frequent Sentence Starter Heuristic]
      if (t2.firstUpper && this.sentStarters.has(nextTyp)) {
        t1.sentbreak = true;
        return;
      }
    }

    // [4.3. Token-Based Detection of Initials and Ordinals]
    if (tokIsInitial || typ === '##number##') {
      const isSentStarter = this.orthoHeuristic(t2);
      if (isSentStarter === false) {
        t1.sentbreak = false;
        t1.abbr = true;
        return;
      }
      if (isSentStarter === 'unknown' && tokIsInitial && t2.firstUpper && !((this.orthoContext.get(nextTyp) ?? 0) & ORTHO_LC)) {
        t1.sentbreak = false;
        t1.abbr = true;
      }
    }
  }

  /** Python `_ortho_heuristic`: is the token the first of a sentence? */
  private orthoHeuristic(t: Token): boolean | 'unknown' {
    if (PUNCTUATION.has(t.tok)) return false;
    const ctx = this.orthoContext.get(t.typeNoSentperiod) ?? 0;
    if (t.firstUpper && ctx & ORTHO_LC && !(ctx & ORTHO_MID_UC)) return true;
    if (t.firstLower && (ctx & ORTHO_UC || !(ctx & ORTHO_BEG_LC))) return false;
    return 'unknown';
  }
}

function isReadonlyMap(x: unknown): x is ReadonlyMap<string, number> {
  return x instanceof Map;
}
