/**
 * Cleaning of the reference answers datasets ship with their questions, before they reach the
 * refine and answer prompts. Those answers were written for the dataset's own task: Geo170K's name
 * an option letter of a `Choices:` block the question cleaner removed, MultiUI's web QA answers
 * carry element boxes, ChartQA's labels are raw spreadsheet cells. A reference that names a letter
 * the prompt no longer shows, or a box the answer model cannot see, teaches it nonsense. Pure.
 */
import { OPTION_LINE } from './questions.js';

/** The option texts a question offers, by upper-case letter (`A: 30°` gives A → `30°`). */
export function optionTexts(question: string): Map<string, string> {
  const options = new Map<string, string>();
  for (const line of question.replace(/\r\n?/g, '\n').split('\n')) {
    const m = OPTION_LINE.exec(line);
    if (!m) continue;
    const letter = (m[1] ?? m[2]!).toUpperCase();
    const text = line.slice(m[0].length - 1).trim();
    if (!options.has(letter) && text !== '') options.set(letter, text);
  }
  return options;
}

/** Geo170K's closing `Answer:C` / `Answer: (C).` line (or the whole answer being just that). */
const ANSWER_LETTER_LINE = /(?:^|\n)[ \t]*Answer[ \t]*[:：][ \t]*\(?([A-H])\)?\.?[ \t]*$/;
/** `the answer is: C.`, `The answer is (B)`, `the correct option is D`: a letter where a value belongs. */
// Letters are matched upper-case only: "the answer is a dog" names no option.
const ANSWER_IS_LETTER = /\b([Tt]he (?:correct )?(?:answer|option|choice) is)[ \t]*[:：]?[ \t]*(?:option[ \t]+)?\(?([A-H])\)?(?![A-Za-z0-9])/g;

/** The sentence around a letter ANSWER_IS_LETTER left in place because no option text explains it. */
const UNEXPLAINED_LETTER = /[^.\n]*\b[Tt]he (?:correct )?(?:answer|option|choice) is[ \t]*[:：]?[ \t]*(?:option[ \t]+)?\(?[A-H]\)?(?![A-Za-z0-9])[^.\n]*\.?/g;

/**
 * The answer with option letters replaced by the option's text where the question offered it, and
 * removed where it did not: `...= 58°. Therefore, the answer is: C.\nAnswer:C` with C = `58°` gives
 * `...= 58°. Therefore, the answer is: 58°.`. Undefined when nothing but a letter was left.
 */
export function withoutOptionLetters(answer: string, options: ReadonlyMap<string, string>): string | undefined {
  let text = answer.replace(/\r\n?/g, '\n').trimEnd();
  const closing = ANSWER_LETTER_LINE.exec(text);
  if (closing) {
    const rest = text.slice(0, closing.index).trimEnd();
    // A bare `Answer:B` is the whole reference: the option's text is the answer.
    text = rest === '' ? (options.get(closing[1]!) ?? '') : rest;
  }
  text = text.replace(ANSWER_IS_LETTER, (whole, lead: string, letter: string) => {
    const value = options.get(letter.toUpperCase());
    return value === undefined ? whole : `${lead} ${value}`;
  });
  // A letter no option explains is dropped with its sentence rather than kept meaningless.
  text = text.replace(UNEXPLAINED_LETTER, '').trim();
  return text === '' ? undefined : text;
}

/** `[x1, y1, x2, y2]` element boxes (integers or decimals), with the space or parentheses around them. */
const BOX = /[ \t]*\(?\[[ \t]*-?\d+(?:\.\d+)?(?:[ \t]*,[ \t]*-?\d+(?:\.\d+)?){3}[ \t]*\]\)?/g;

/** The answer without element boxes, which describe page coordinates the answer model is never shown. */
export function withoutBoxes(answer: string): string | undefined {
  const text = answer
    .replace(BOX, '')
    .replace(/[ \t]+([.,;:])/g, '$1')
    .trim();
  return text === '' ? undefined : text;
}

export type LabelVerdict =
  { ok: true; answer: string; /** Set when the label was rewritten: what it was recognised as. */ normalised?: string } | { ok: false; filter: 'label-unreadable'; detail: string };

/** Serials Excel and Sheets give dates between 1950-01-01 and 2049-12-31 (day 1 = 1900-01-01, with the 1900 leap-year bug). */
const SERIAL_MIN = 18264;
const SERIAL_MAX = 54789;
/** Questions about when something happened: there a five-digit label is a date cell shown as its serial. */
const ASKS_FOR_DATE = /\b(?:when|date|day|month|year|period|time)\b/i;

/**
 * A ChartQA label a reader can use as a reference. Labels came from the chart's data cells: a date
 * cell exported as its spreadsheet serial (`"44362"` for 2021-06-15) is rewritten to the ISO date
 * when the question asks about a date; a list exported as a Python/JSON list string (`"[4, 9]"`) is
 * rewritten to `4, 9`; a bracketed label that does not parse is refused, so the record is counted
 * rather than fed to the answer model.
 */
export function chartLabel(label: string, question: string): LabelVerdict {
  const text = label.trim();
  if (/^\[.*\]$/s.test(text)) {
    const items = listItems(text);
    if (!items) return { ok: false, filter: 'label-unreadable', detail: `label ${JSON.stringify(text.slice(0, 60))} looks like a list but does not parse` };
    return { ok: true, answer: items.join(', '), normalised: 'list' };
  }
  if (/^\d{5}$/.test(text) && ASKS_FOR_DATE.test(question)) {
    const serial = Number(text);
    if (serial >= SERIAL_MIN && serial <= SERIAL_MAX) return { ok: true, answer: serialDate(serial), normalised: 'spreadsheet-serial' };
  }
  return { ok: true, answer: text };
}

/** The scalar items of a `[...]` list string (JSON, or Python's single-quoted strings), or undefined. */
function listItems(text: string): string[] | undefined {
  for (const candidate of [text, text.replace(/'/g, '"')]) {
    try {
      const value: unknown = JSON.parse(candidate);
      if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string' || typeof v === 'number')) {
        return value.map((v) => String(v).trim());
      }
    } catch {
      // not this spelling; try the next
    }
  }
  return undefined;
}

/** ISO date of a spreadsheet serial (1900 date system: serial 25569 is 1970-01-01). */
function serialDate(serial: number): string {
  return new Date((serial - 25569) * 86_400_000).toISOString().slice(0, 10);
}
