/**
 * Cleaning and filtering of the questions datasets ship with their images (ALLaVA, ChartQA,
 * Geo170K, MultiUI) before they seed an instruction. Datasets wrap questions in prompt boilerplate
 * written for their own training format (`<image>` tokens, "Answer with the option's letter...",
 * Geo170K's "First perform reasoning..." preamble); MM-IFEngine adds its own constraints, so that
 * wrapping is removed. Multiple-choice and few-shot prompts are dropped (or, for multiple choice,
 * reduced to their stem) because a constraint-following answer to them makes no sense. Pure.
 */
import type { QuestionPolicy } from '../config/sourceFields.js';

export type QuestionFilter = 'multiple-choice' | 'few-shot' | 'too-short' | 'too-long';

export type QuestionVerdict =
  { ok: true; question: string } | { ok: false; /** Stable key to count drops by. */ reason: QuestionFilter; /** What was found, for the record. */ detail: string };

/** Answer-format instructions and preambles written for the dataset's own training, removed wherever they appear. */
const BOILERPLATE: RegExp[] = [
  // Geo170K / MathV360K: "First perform reasoning, then finally select the question from the choices in the following format: Answer: xxx."
  /^[ \t]*(?:according to the question shown in the image, )?(?:please )?first (?:perform|conduct) reasoning\b[^\n]*$/gim,
  // Geo170K's other preamble (qa_tuning.json), quoted in HJYao00/Mulberry's README: "Based on the image, directly select the correct answer for the following question:"
  /^[ \t]*based on the image, directly select the correct answer for the following question[ \t]*[:：]?[ \t]*$/gim,
  /^[ \t]*hint: please answer the question\b[^\n]*$/gim,
  /answer with the option'?s letter from the given choices directly\.?/gi,
  /answer with the given options directly\.?/gi,
  /answer the question using a single word or phrase\.?/gi,
  /answer the question by selecting only one option from the given options\.?/gi,
  // Vision-FLAN's task framing (ALLaVA's allava_vflan questions carry its templates): "You are provided
  // with an image and a question related to the image. Answer the question based on the information
  // given in the image." and "In this task, you are given an image of ...". The question that follows stays.
  /(?:^|(?<=[.!?:]\s))[ \t]*(?:in this task, )?you (?:are|will be) (?:provided with|given|shown|presented with) an image\b[^.!?\n]*[.!?]?/gim,
  /(?:please )?answer (?:the|this) question based on the (?:information|content|details) (?:given |provided |shown )?in the image\.?/gi,
];

/** A line that opens an options block: `Choices:`, `Options: (a) ...`. */
const OPTIONS_HEADER = /^[ \t]*(?:answer )?(?:choices|options|candidates)[ \t]*[:：]/i;
/** A labelled option line: `A. cat`, `B: 45°`, `(C) dog`, `d) none`; the label letter is captured. */
export const OPTION_LINE = /^[ \t]*(?:\(([A-Ha-h])\)|([A-Ha-h])[ \t]*[.:)：])[ \t]*\S/;
/** Options run together on one line: `... (A) cat (B) dog (C) ...`, from `(A)` to the line's end. */
const INLINE_OPTIONS = /[ \t]*\(A\)[^\n]*\(B\)[^\n]*/;

/** Several question labels, an answer given in the prompt, or an example block: the prompt carries demonstrations. */
const QUESTION_LABEL = /^[ \t]*(?:Q|Question)[ \t]*\d*[ \t]*[:：]/gim;
const ANSWER_WITH_CONTENT = /^[ \t]*(?:Answer|Output)[ \t]*\d*[ \t]*[:：][ \t]*\S/im;
const EXAMPLE_LABEL = /^[ \t]*(?:for )?examples?[ \t]*\d*[ \t]*[:：]/im;

/**
 * What every rule below needs at least one of: a line break, a colon, inline options, or a word of a
 * boilerplate pattern (`image` also covers the `<image>` token). A question without any (most of
 * them) is only tidied.
 */
const NEEDS_RULES = /[\n\r:：]|\(A\)|answer|reasoning|image/i;

/** Runs of spaces and tabs to collapse to one space: a lone space is left as it is (no new string for a plain question). */
const SPACE_RUNS = /[ \t]{2,}|\t/g;

export function cleanQuestion(raw: string, policy: QuestionPolicy): QuestionVerdict {
  return verdictOf(NEEDS_RULES.test(raw) ? applyRules(raw, policy) : raw.replace(SPACE_RUNS, ' ').trim(), policy);
}

/** cleanQuestion by every rule, whatever the text holds (the tests check the shortcut against it). */
export function cleanQuestionByRules(raw: string, policy: QuestionPolicy): QuestionVerdict {
  return verdictOf(applyRules(raw, policy), policy);
}

function verdictOf(cleaned: string | QuestionVerdict, policy: QuestionPolicy): QuestionVerdict {
  if (typeof cleaned !== 'string') return cleaned;
  if (cleaned.length < policy.minLength) {
    return { ok: false, reason: 'too-short', detail: `${cleaned.length} characters after cleaning, below ${policy.minLength}` };
  }
  if (cleaned.length > policy.maxLength) {
    return { ok: false, reason: 'too-long', detail: `${cleaned.length} characters after cleaning, above ${policy.maxLength}` };
  }
  return { ok: true, question: cleaned };
}

/** The question with boilerplate and options removed and tidied, or the verdict dropping it. */
function applyRules(raw: string, policy: QuestionPolicy): string | QuestionVerdict {
  let text = raw.replace(/\r\n?/g, '\n').replace(/<image>/gi, ' ');
  for (const pattern of BOILERPLATE) text = text.replace(pattern, '');

  const demos = fewShotSigns(text);
  if (demos && policy.dropFewShot) return { ok: false, reason: 'few-shot', detail: `the prompt carries worked examples (${demos})` };

  const options = optionSigns(text);
  if (options) {
    if (policy.dropMultipleChoice) return { ok: false, reason: 'multiple-choice', detail: `the question offers answer options (${options})` };
    text = stripOptions(text);
  }

  return tidy(text);
}

/** What marks the text as few-shot, or undefined. */
function fewShotSigns(text: string): string | undefined {
  const questions = text.match(QUESTION_LABEL)?.length ?? 0;
  if (questions >= 2) return `${questions} question labels`;
  if (ANSWER_WITH_CONTENT.test(text)) return 'an answer given in the prompt';
  if (EXAMPLE_LABEL.test(text)) return 'an example block';
  return undefined;
}

/** What marks the text as multiple choice, or undefined. */
function optionSigns(text: string): string | undefined {
  const lines = text.split('\n');
  const header = lines.find((line) => OPTIONS_HEADER.test(line));
  if (header) return `"${header.trim().slice(0, 40)}"`;
  const letters = new Set<string>();
  for (const line of lines) {
    const m = OPTION_LINE.exec(line);
    if (m) letters.add((m[1] ?? m[2]!).toUpperCase());
  }
  // One labelled line is a sentence that happens to start with "A."; A and B together are options.
  if (letters.has('A') && letters.has('B')) return `labelled options ${[...letters].sort().join(', ')}`;
  if (INLINE_OPTIONS.test(text)) return 'inline options (A), (B)';
  return undefined;
}

/** The question without its options block, labelled option lines or inline options. */
function stripOptions(text: string): string {
  const kept: string[] = [];
  let inBlock = false;
  for (const line of text.split('\n')) {
    if (OPTIONS_HEADER.test(line)) {
      inBlock = true;
      continue;
    }
    if (OPTION_LINE.test(line) || (inBlock && line.trim() === '')) continue;
    inBlock = false;
    kept.push(line.replace(INLINE_OPTIONS, ''));
  }
  // Geo170K stems end in an empty answer slot: "then the degree of ∠BOC is ()".
  return kept
    .join('\n')
    .trimEnd()
    .replace(/[ \t]*[(（][ \t]*[)）]$/, '');
}

/** Drops a leading "Question:" label, runs of spaces (left where tokens were) and blank-line runs. */
function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(SPACE_RUNS, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
    .replace(/^(?:Question|Q)[ \t]*[:：][ \t]*/i, '')
    .trim();
}
