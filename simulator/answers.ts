/**
 * Prose answers that follow the recognised constraints of the answer prompt — usually. Each
 * recognised constraint is followed with probability `complianceRate` and otherwise broken on
 * purpose, so the pipeline's verification and regeneration paths get exercised.
 *
 * Writing works in three steps: the decisions become a `Spec` (counts, phrases to insert,
 * terms to avoid), the spec becomes a layout of sentence slots (per paragraph, with exact word
 * budgets when the length is constrained), and each slot is rendered from clause templates.
 * All slot values are single words, so every template's word count is known up front.
 */
import { ANSWER_HEADINGS } from '../prompts/answerPrompt.js';
import { APPEND_ALL_HEADING } from '../prompts/multiturnChat.js';
import { textAfter } from './promptSections.js';
import type { Rng } from './rng.js';
import type { ReplyTuning } from './replies.js';
import { countWords, mentionCount, parseRule, type Range, type Rule } from './rules.js';

interface AnswerPrompt {
  instruction: string;
  constraints: string[];
}

/**
 * The task and constraints of an answer prompt in either template the builds and `mmif eval` send:
 * numbered ("## Task Description\n<instruction>\n\n## Constraints\n...\n1. <constraint>\n2. ...") or
 * inline (MM-IFEval's `make_prompt_v2`, the records' default: the instruction, then each constraint's
 * text, joined by single spaces; prompts/trainingPrompt.ts). Inline text has no markers, so every
 * sentence the simulator recognises as a constraint (rules.ts) is one, as a model reading the prose
 * would take it.
 */
export function parseAnswerPrompt(text: string): AnswerPrompt {
  const task = textAfter(text, ANSWER_HEADINGS.task, ANSWER_HEADINGS.constraints);
  const constraintsAt = text.indexOf(ANSWER_HEADINGS.constraints);
  if (task === undefined && constraintsAt < 0) return parseInlinePrompt(text);
  const constraintText = constraintsAt >= 0 ? text.slice(constraintsAt) : '';
  return {
    instruction: (task ?? text).trim(),
    constraints: [...constraintText.matchAll(/^\s*\d+\.\s+(.*)$/gm)].map((match) => (match[1] ?? '').trim()),
  };
}

/**
 * Sentences of inline prose: a break after . ! ? (or a closing quote, since constraints such as
 * "Start your answer with 'In short,'" end without a stop) and whitespace, before a capital letter.
 */
const INLINE_SENTENCE_BREAK = /(?<=[.!?]|['"’”])\s+(?=[A-Z])/;

/**
 * make_prompt_v2 puts the instruction first: the task is the prose before the first recognised
 * constraint; later sentences the simulator does not understand are constraints it cannot follow
 * (tone, audience), left out as the numbered form's are.
 */
function parseInlinePrompt(text: string): AnswerPrompt {
  const sentences = text.trim().split(INLINE_SENTENCE_BREAK);
  const first = sentences.findIndex((sentence) => parseRule(sentence) !== undefined);
  if (first < 0) return { instruction: text.trim(), constraints: [] };
  return { instruction: sentences.slice(0, first).join(' ') || text.trim(), constraints: sentences.slice(first).filter((sentence) => parseRule(sentence) !== undefined) };
}

export function writeAnswer(prompt: AnswerPrompt, rng: Rng, complianceRate: number): string {
  return writeFollowing(
    prompt.instruction,
    prompt.constraints.map((text) => ({ text, compliance: complianceRate })),
    rng,
  );
}

/**
 * How persistent ("From now on, ...") instructions are followed in a chat: one given k turns back is
 * followed with probability complianceRate · persistence^k (`persistence`, SIM_PERSISTENCE, default
 * 0.97 per turn), so PIF falls over a 20-turn chat (from about 0.9 to 0.6 at the defaults) as seed 002
 * measures for real models, and appending the instructions at the end (k = 0) brings it back.
 * `persistence` 1 follows every earlier instruction as if just given; 0 forgets each after its turn.
 */

/**
 * Answers the last question of a chat whose user turns read "[instruction\n\n]question", the last one
 * optionally followed by the appended list of every instruction given (seed 002's ablation).
 */
export function writeChatAnswer(userTexts: readonly string[], rng: Rng, tuning: Pick<ReplyTuning, 'complianceRate' | 'persistence'>): string {
  const pull = new Map<string, number>();
  const remember = (text: string, turnsAgo: number) => {
    const compliance = tuning.complianceRate * tuning.persistence ** turnsAgo;
    pull.set(text, Math.max(pull.get(text) ?? 0, compliance));
  };
  let question = '';
  userTexts.forEach((text, i) => {
    const turnsAgo = userTexts.length - 1 - i;
    const appendedAt = text.indexOf(APPEND_ALL_HEADING);
    const body = appendedAt >= 0 ? text.slice(0, appendedAt).trim() : text.trim();
    const paragraphs = body.split(/\n\s*\n/);
    for (const instruction of paragraphs.slice(0, -1)) remember(instruction.trim(), turnsAgo);
    if (turnsAgo === 0) {
      question = paragraphs.at(-1) ?? '';
      if (appendedAt >= 0) for (const m of text.slice(appendedAt).matchAll(/^\s*\d+\.\s+(.*)$/gm)) remember((m[1] ?? '').trim(), 0);
    }
  });
  return writeFollowing(
    question,
    [...pull].map(([text, compliance]) => ({ text, compliance })),
    rng,
  );
}

function writeFollowing(instruction: string, constraints: ReadonlyArray<{ text: string; compliance: number }>, rng: Rng): string {
  const spec = emptySpec();
  for (const constraint of constraints) {
    const rule = parseRule(constraint.text);
    if (rule) applyRule(spec, rule, rng.chance(constraint.compliance), rng);
  }
  const vocabulary = new Vocabulary(instructionKeywords(instruction), spec.avoid);
  return planLayout(spec, vocabulary, rng)
    .map((paragraph) => paragraph.map((slot) => renderSlot(slot, vocabulary, rng)).join(' '))
    .join('\n\n');
}

// ---------------------------------------------------------------------------------------
// Decisions → spec

/** The answer's shape once every follow/break decision is made. */
interface Spec {
  paragraphs?: number;
  sentencesPerParagraph?: Range;
  /** A sentence count outside `sentencesPerParagraph`, given to one paragraph to break it. */
  oddParagraphSentences?: number;
  totalSentences?: number;
  words?: { range: Range; comply: boolean };
  /** Exact occurrences to write, per phrase. */
  mentions: Map<string, number>;
  /** Lowercase terms the generated filler must not contain, so only deliberate mentions count. */
  avoid: string[];
  opening?: string;
  closing?: string;
  /** Decimal places every number must have (a followed precision constraint). */
  decimals?: number;
  /** Decimal places of one deliberately wrong number (a broken precision constraint). */
  wrongDecimals?: number;
  noNumbers: boolean;
  /** A broken "no numbers" constraint: at least one number must appear. */
  someNumber: boolean;
}

function emptySpec(): Spec {
  return { mentions: new Map(), avoid: [], noNumbers: false, someNumber: false };
}

function applyRule(spec: Spec, rule: Rule, comply: boolean, rng: Rng): void {
  switch (rule.kind) {
    case 'paragraphs':
      spec.paragraphs = countFor(rule.count, comply, 1, rng);
      return;
    case 'sentencesPerParagraph':
      spec.sentencesPerParagraph = rule.count;
      if (!comply) spec.oddParagraphSentences = outside(rule.count, 1, rng);
      return;
    case 'sentences':
      spec.totalSentences = countFor(rule.count, comply, 1, rng);
      return;
    case 'words':
      spec.words = { range: rule.count, comply };
      return;
    case 'mention': {
      const broken = comply ? undefined : rng.pick(rule.phrases);
      for (const phrase of rule.phrases) {
        spec.avoid.push(phrase.toLowerCase());
        spec.mentions.set(phrase, countFor(rule.count, phrase !== broken, 0, rng));
      }
      return;
    }
    case 'notMention':
      spec.avoid.push(...rule.phrases.map((phrase) => phrase.toLowerCase()));
      if (!comply) spec.mentions.set(rng.pick(rule.phrases), 1);
      return;
    case 'startsWith':
      if (comply) spec.opening = rule.phrase;
      return;
    case 'endsWith':
      if (comply) spec.closing = rule.phrase;
      return;
    case 'precision':
      if (comply) spec.decimals = rule.decimals;
      else spec.wrongDecimals = rule.decimals + 1;
      return;
    case 'noNumbers':
      if (comply) spec.noNumbers = true;
      else spec.someNumber = true;
  }
}

/** A count inside the range (near its low end, as open ranges have no natural top), or just outside it. */
function countFor(range: Range, comply: boolean, floor: number, rng: Rng): number {
  const broken = comply ? undefined : outside(range, floor, rng);
  if (broken !== undefined) return broken;
  const low = Math.max(range.min, floor);
  return rng.int(low, Math.max(low, Math.min(range.max, low + 2)));
}

/** One below or one above the range; undefined when neither exists ("at least 0"). */
function outside(range: Range, floor: number, rng: Rng): number | undefined {
  const options = [range.min - 1, range.max + 1].filter((count) => count >= floor && Number.isFinite(count));
  return options.length === 0 ? undefined : rng.pick(options);
}

/**
 * Decimal places of the numbers to write. A followed "no numbers" wins over everything; a
 * followed precision still shows one number, so the answer visibly honours it.
 */
function numberDecimals(spec: Spec): number[] {
  if (spec.noNumbers) return [];
  const decimals = [spec.decimals, spec.wrongDecimals].filter((places) => places !== undefined);
  if (spec.someNumber && decimals.length === 0) decimals.push(0);
  return decimals;
}

// ---------------------------------------------------------------------------------------
// Spec → layout

/** One sentence to write: fixed text, or generated clauses around the required inserts. */
interface Slot {
  fixed?: string;
  /** An opening phrase merged into this sentence ("In this image, the scene…"). */
  prefix?: string;
  /** Clauses that must appear: mentions and numbers. */
  inserts: string[];
  /** Exact word count, when the answer's length is constrained. */
  words?: number;
}

const TYPICAL_SENTENCE_WORDS = 12;
const FREE_SENTENCES: Range = { min: 2, max: 5 };
/** With a word target and no sentence rule, counts follow the target within these bounds. */
const SIZED_SENTENCES: Range = { min: 1, max: 10 };

function planLayout(spec: Spec, vocabulary: Vocabulary, rng: Rng): Slot[][] {
  const paragraphs = spec.paragraphs ?? rng.int(2, 3);
  const layout = sentenceCounts(spec, paragraphs, rng).map((count) => Array.from({ length: count }, (): Slot => ({ inserts: [] })));
  placeEnds(layout, spec);
  placeInserts(layout, requiredInserts(spec, vocabulary, rng), rng);
  if (spec.words) sizeSlots(layout, spec.words, rng);
  return layout;
}

function sentenceCounts(spec: Spec, paragraphs: number, rng: Rng): number[] {
  // An empty paragraph is no paragraph, so each needs a sentence even if the total says fewer.
  if (spec.totalSentences !== undefined) return spread(Math.max(spec.totalSentences, paragraphs), paragraphs, rng);
  const range = spec.sentencesPerParagraph ?? (spec.words ? SIZED_SENTENCES : FREE_SENTENCES);
  const ideal = spec.words === undefined ? undefined : Math.round(likelyWords(spec.words.range) / (paragraphs * TYPICAL_SENTENCE_WORDS));
  const low = Math.max(range.min, 1);
  const counts = Array.from({ length: paragraphs }, () =>
    ideal === undefined ? rng.int(low, Math.min(range.max, low + 3)) : Math.min(range.max, Math.max(low, ideal + rng.int(-1, 1))),
  );
  if (spec.oddParagraphSentences !== undefined) counts[rng.int(0, paragraphs - 1)] = spec.oddParagraphSentences;
  return counts;
}

/** Only steers the sentence count, so a rough middle of the range is enough. */
function likelyWords(range: Range): number {
  return (range.min + Math.min(range.max, range.min + 60)) / 2;
}

/** `total` split into `parts` near-equal whole shares, the remainder going to random parts. */
function spread(total: number, parts: number, rng: Rng): number[] {
  const shares = Array.from({ length: parts }, () => Math.floor(total / parts));
  for (const index of rng.sample([...shares.keys()], total % parts)) shares[index] = (shares[index] ?? 0) + 1;
  return shares;
}

/**
 * An opening that ends a sentence ("Welcome!") takes the first slot whole, since sentence
 * splitters count it as a sentence. Other openings lead into the first sentence, and so does an
 * ellipsis ("Once upon a time... the"): Punkt breaks after one only before some capitalised
 * words, but never before a lowercase one.
 */
function placeEnds(layout: Slot[][], spec: Spec): void {
  const first = layout[0]?.[0];
  if (first && spec.opening !== undefined) {
    if (/[.!?]$/.test(spec.opening) && !/(\.\.\.|…)$/.test(spec.opening)) first.fixed = spec.opening;
    else first.prefix = spec.opening;
  }
  const last = layout.at(-1)?.at(-1);
  if (last && spec.closing !== undefined) last.fixed = spec.closing;
}

/** Mention clauses (minus occurrences the opening or closing already provide) and number clauses. */
function requiredInserts(spec: Spec, vocabulary: Vocabulary, rng: Rng): string[] {
  const endsText = [spec.opening, spec.closing].join(' ');
  const mentions = [...spec.mentions].flatMap(([phrase, count]) =>
    Array.from({ length: Math.max(0, count - mentionCount(endsText, phrase)) }, () => vocabulary.mentionClause(phrase, rng)),
  );
  const numbers = numberDecimals(spec).map((places) => vocabulary.numberClause((rng.int(200, 4000) / 100).toFixed(places), rng));
  return [...mentions, ...numbers];
}

/** Round-robin over the generated slots in random order, so inserts spread across the answer. */
function placeInserts(layout: Slot[][], inserts: readonly string[], rng: Rng): void {
  const slots = generatedSlots(layout);
  const order = rng.sample(slots, slots.length);
  inserts.forEach((insert, i) => order[i % order.length]?.inserts.push(insert));
}

function generatedSlots(layout: Slot[][]): Slot[] {
  return layout.flat().filter((slot) => slot.fixed === undefined);
}

/** Gives every generated slot an exact word count so the total hits the chosen target. */
function sizeSlots(layout: Slot[][], target: { range: Range; comply: boolean }, rng: Rng): void {
  const slots = generatedSlots(layout);
  const minimum = layout.flat().reduce((sum, slot) => sum + minimumWords(slot), 0);
  const total = wordTotal(target.range, target.comply, minimum, rng);
  const weights = slots.map(() => 0.5 + rng.next());
  const shares = splitByWeight(Math.max(0, total - minimum), weights);
  slots.forEach((slot, i) => {
    slot.words = minimumWords(slot) + (shares[i] ?? 0);
  });
}

function minimumWords(slot: Slot): number {
  const prefix = countWords(slot.prefix ?? '');
  if (slot.fixed !== undefined) return prefix + countWords(slot.fixed);
  return prefix + (slot.inserts.length === 0 ? SHORTEST_CLAUSE : clausesWords(slot.inserts));
}

/**
 * Inside the range when complying (never below what the layout needs); when breaking, a few
 * words below or above it, whichever the layout allows.
 */
function wordTotal(range: Range, comply: boolean, minimum: number, rng: Rng): number {
  if (comply) {
    const low = Math.max(range.min, minimum);
    return low > range.max ? minimum : rng.int(low, Math.min(range.max, low + 60));
  }
  const step = rng.int(3, 15);
  const options = [range.min - step, range.max + step].filter((total) => total >= minimum && Number.isFinite(total));
  return options.length === 0 ? minimum : rng.pick(options);
}

/** Whole shares proportional to `weights` that add up to exactly `total`. */
function splitByWeight(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const shares = weights.map((weight) => Math.floor((total * weight) / sum));
  let rest = total - shares.reduce((a, b) => a + b, 0);
  for (let i = 0; rest > 0; i = (i + 1) % shares.length, rest--) shares[i] = (shares[i] ?? 0) + 1;
  return shares;
}

// ---------------------------------------------------------------------------------------
// Layout → text

function renderSlot(slot: Slot, vocabulary: Vocabulary, rng: Rng): string {
  if (slot.fixed !== undefined) return [slot.prefix, slot.fixed].filter((part) => part !== undefined).join(' ');
  const budget = slot.words === undefined ? undefined : slot.words - countWords(slot.prefix ?? '');
  const body = budget === undefined ? naturalBody(slot.inserts, vocabulary, rng) : sizedBody(budget, slot.inserts, vocabulary, rng);
  return withPrefix(slot.prefix, `${body}.`);
}

function naturalBody(inserts: readonly string[], vocabulary: Vocabulary, rng: Rng): string {
  return joinClauses(insertAtRandom([...inserts], vocabulary.anyClause(rng), rng), vocabulary, rng);
}

/** Template clauses around the inserts until the budget is nearly used, then padding for the rest. */
function sizedBody(words: number, inserts: readonly string[], vocabulary: Vocabulary, rng: Rng): string {
  let clauses = [...inserts];
  let free = words - clausesWords(clauses);
  for (;;) {
    const join = clauses.length > 0 ? 1 : 0;
    const clause = vocabulary.clauseUpTo(free - join, rng);
    if (clause === undefined) break;
    clauses = insertAtRandom(clauses, clause, rng);
    free -= countWords(clause) + join;
  }
  return [joinClauses(clauses, vocabulary, rng), vocabulary.padding(free, rng)].filter((part) => part !== '').join(' ');
}

/** Clauses joined by ", <connector> " cost one word per join. */
function clausesWords(clauses: readonly string[]): number {
  return clauses.reduce((sum, clause) => sum + countWords(clause), 0) + Math.max(0, clauses.length - 1);
}

function insertAtRandom(clauses: string[], clause: string, rng: Rng): string[] {
  const at = rng.int(0, clauses.length);
  return [...clauses.slice(0, at), clause, ...clauses.slice(at)];
}

function joinClauses(clauses: readonly string[], vocabulary: Vocabulary, rng: Rng): string {
  const [first = '', ...rest] = clauses;
  const joined = rest.reduce((text, clause) => `${text}, ${vocabulary.connector(rng)} ${clause}`, first);
  return joined.charAt(0).toUpperCase() + joined.slice(1);
}

/** "In this image" + "The scene…" reads as "In this image, the scene…". */
function withPrefix(prefix: string | undefined, sentence: string): string {
  if (prefix === undefined) return sentence;
  const lowered = sentence.charAt(0).toLowerCase() + sentence.slice(1);
  return /[A-Za-z0-9]$/.test(prefix) ? `${prefix}, ${lowered}` : `${prefix} ${lowered}`;
}

// ---------------------------------------------------------------------------------------
// Vocabulary

const STOPWORDS = new Set([
  'about',
  'above',
  'after',
  'again',
  'also',
  'based',
  'being',
  'could',
  'describe',
  'does',
  'each',
  'explain',
  'from',
  'have',
  'image',
  'into',
  'might',
  'picture',
  'photo',
  'should',
  'some',
  'that',
  'their',
  'there',
  'these',
  'this',
  'what',
  'when',
  'where',
  'which',
  'while',
  'with',
  'would',
  'write',
  'your',
]);

/**
 * A few content words from the instruction make the prose look on-topic. They may be nouns or
 * adjectives, so templates use them as modifiers ("the {kw} elements").
 */
function instructionKeywords(instruction: string): string[] {
  const words = (instruction.toLowerCase().match(/[a-z][a-z'-]{3,}/g) ?? []).filter((word) => !STOPWORDS.has(word));
  const unique = [...new Set(words)].slice(0, 8);
  return unique.length > 0 ? unique : ['scene'];
}

/** Clauses start lowercase and carry no final period; joinClauses capitalises the first. */
const CLAUSES = [
  'the scene centres on the {adj} {noun} set against the {place}',
  'when it comes to {kw} details, the most striking element is the {noun} near the {place}',
  'soft {light} light falls across the {noun}, giving the whole view a {feeling} quality',
  'the {kw} elements are easy to overlook at first',
  'details such as the {adj} edges of the {noun} reward a second look',
  'the {noun} feels both {adj} and {feeling}',
  'a closer reading of the {kw} aspects suggests a story beyond the frame',
  'the balance between the {noun} and the {place} keeps the eye moving',
  'colors shift gently from the {place} toward the {noun}',
  'nothing about the {kw} elements feels staged',
  'the {light} light emphasizes the {noun}',
  'the {kw} elements and the {noun} create a {feeling} impression',
  'the {noun} looks {adj}',
  'it feels {feeling}',
  'the {place} stays {adj}',
  'everything seems {feeling}',
  'the {noun} draws attention',
  'a {adj} {noun} anchors the view',
  'the {place} opens up behind it',
  'the mood is {feeling} and unhurried',
  'the {kw} side of the scene matters most here',
];
const MENTION_CLAUSES = ['the eye keeps returning to {m}', 'everything here hints at {m}', 'there is a clear sense of {m}', 'much of the mood rests on {m}'];
const NUMBER_CLAUSES = ['the {noun} sits roughly {n} metres from the {place}', 'about {n} metres separate the {noun} from the {place}'];
const PADDING = ['here', 'today', 'again', 'as well', 'for now', 'right there', 'in quiet ways', 'at this hour'];
const CONNECTORS = ['and', 'while', 'as'];
const SLOT_WORDS: Record<string, readonly string[]> = {
  adj: ['weathered', 'bright', 'quiet', 'textured', 'slender', 'rounded', 'vivid', 'muted'],
  noun: ['figure', 'doorway', 'tree', 'bicycle', 'table', 'boat', 'lamp', 'wall', 'path', 'window'],
  place: ['sky', 'hillside', 'street', 'water', 'courtyard', 'field', 'horizon', 'shoreline'],
  light: ['morning', 'golden', 'diffuse', 'late-afternoon', 'overcast', 'warm'],
  feeling: ['peaceful', 'lively', 'nostalgic', 'hopeful', 'contemplative', 'tender'],
};

interface Template {
  text: string;
  words: number;
}

const toTemplate = (text: string): Template => ({ text, words: countWords(text) });
const CLAUSE_TEMPLATES = CLAUSES.map(toTemplate);
const PADDING_TEMPLATES = PADDING.map(toTemplate);
const SHORTEST_CLAUSE = Math.min(...CLAUSE_TEMPLATES.map((template) => template.words));

/** A random template of exactly `words` words if there is one, else of the most words below that. */
function closestFit(templates: readonly Template[], words: number, rng: Rng): Template | undefined {
  const longest = templates.reduce((best, template) => (template.words <= words ? Math.max(best, template.words) : best), 0);
  const fitting = templates.filter((template) => template.words === longest);
  return fitting.length === 0 ? undefined : rng.pick(fitting);
}

/**
 * The building blocks of one answer, without anything that contains an avoided term (by
 * substring, stricter than the word-boundary checks). A list that would end up empty is kept
 * whole: a garbled constraint ("avoid 'e'") then breaks instead of the writer.
 */
class Vocabulary {
  private readonly clauses: Template[];
  private readonly mentionClauses: string[];
  private readonly numberClauses: string[];
  private readonly paddings: Template[];
  private readonly connectors: string[];
  private readonly slots: Record<string, readonly string[]>;

  constructor(keywords: readonly string[], avoid: readonly string[]) {
    const allowed = (text: string) => {
      const fixedWords = text.replace(/\{\w+\}/g, ' ').toLowerCase();
      return !avoid.some((term) => fixedWords.includes(term));
    };
    const keep = <T>(items: readonly T[], textOf: (item: T) => string): T[] => {
      const kept = items.filter((item) => allowed(textOf(item)));
      return kept.length > 0 ? kept : [...items];
    };
    const same = (text: string) => text;
    this.clauses = keep(CLAUSE_TEMPLATES, (template) => template.text);
    this.mentionClauses = keep(MENTION_CLAUSES, same);
    this.numberClauses = keep(NUMBER_CLAUSES, same);
    this.paddings = keep(PADDING_TEMPLATES, (template) => template.text);
    this.connectors = keep(CONNECTORS, same);
    this.slots = Object.fromEntries(Object.entries({ ...SLOT_WORDS, kw: keywords }).map(([name, words]) => [name, keep(words, same)]));
  }

  anyClause(rng: Rng): string {
    return this.fill(rng.pick(this.clauses).text, rng);
  }

  /** A clause of at most `words` words, preferring an exact fit; undefined when none is short enough. */
  clauseUpTo(words: number, rng: Rng): string | undefined {
    const template = closestFit(this.clauses, words, rng);
    return template && this.fill(template.text, rng);
  }

  mentionClause(phrase: string, rng: Rng): string {
    return this.fill(rng.pick(this.mentionClauses), rng).replace('{m}', () => phrase);
  }

  numberClause(number: string, rng: Rng): string {
    return this.fill(rng.pick(this.numberClauses), rng).replace('{n}', () => number);
  }

  /** Exactly `words` words of padding when the paddings allow it ("" for 0), in as few pieces as possible. */
  padding(words: number, rng: Rng): string {
    const pieces: string[] = [];
    for (let left = words; left > 0;) {
      const piece = closestFit(this.paddings, left, rng);
      if (piece === undefined) break;
      pieces.push(piece.text);
      left -= piece.words;
    }
    return pieces.join(' ');
  }

  connector(rng: Rng): string {
    return rng.pick(this.connectors);
  }

  /** Fills the vocabulary slots; {m} and {n} are left for the caller. */
  private fill(template: string, rng: Rng): string {
    return template.replace(/\{(\w+)\}/g, (slot, name: string) => {
      const words = this.slots[name];
      return words ? rng.pick(words) : slot;
    });
  }
}
