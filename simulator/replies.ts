/**
 * Pure, deterministic reply generation for the simulator: no I/O, no clock, no global
 * state. Every reply is a function of (seed, request, tuning), so tests and benchmarks can
 * compare runs byte for byte. Stages are told apart here; answers.ts writes the prose
 * answers and judges.ts the verification replies.
 */
import { z } from 'zod';
import { isPromptKind, PROMPT_KINDS } from '../domain/promptKinds.js';
import { CHAT_QUESTIONS_LABELS } from '../prompts/chatQuestionsPrompt.js';
import { CONSTRAINT_LINE_LABELS } from '../prompts/constraintPrompt.js';
import { MULTITURN_SYSTEM_TEXT } from '../prompts/multiturnChat.js';
import { REFINE_HEADINGS } from '../prompts/refinePrompt.js';
import { section, textAfter } from './promptSections.js';
import { parseAnswerPrompt, writeAnswer, writeChatAnswer } from './answers.js';
import { parseCompareJudgePrompt, parseDirectJudgePrompt, parseVerifierSelectionPrompt, writeCompareJudgement, writeDirectJudgement, writeVerifierSelection } from './judges.js';
import { imageUrlTokens } from '../llm/imageTokens.js';
import { rngFromHex, sha256Hex, type Rng } from './rng.js';
import { withoutImageIds } from '../llm/imageIds.js';

export const SIMULATOR_FINGERPRINT = 'mmif-simulator';

// ---------------------------------------------------------------------------------------
// Request shape

const TextPartSchema = z.object({ type: z.literal('text'), text: z.string() }).loose();
const ImagePartSchema = z
  .object({
    type: z.literal('image_url'),
    image_url: z.object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }).loose(),
  })
  .loose();
const ContentPartSchema = z.discriminatedUnion('type', [TextPartSchema, ImagePartSchema]);
const MessageSchema = z
  .object({
    role: z.string().min(1),
    content: z.union([z.string(), z.array(ContentPartSchema), z.null()]).optional(),
  })
  .loose();

/** Loose on purpose: unknown OpenAI parameters are accepted and ignored, like a real server. */
export const ChatRequestSchema = z
  .object({
    model: z.string().min(1),
    messages: z.array(MessageSchema).min(1),
    response_format: z
      .object({
        type: z.string(),
        json_schema: z.object({ name: z.string() }).loose().optional(),
      })
      .loose()
      .nullish(),
    temperature: z.number().nullish(),
    max_tokens: z.number().int().positive().nullish(),
    max_completion_tokens: z.number().int().positive().nullish(),
    stream: z.boolean().nullish(),
    /** The OpenAI sampling seed: part of the request key, so a new seed gives a new reply. */
    seed: z.number().int().nullish(),
    /** One choice per reply is all the simulator writes. */
    n: z.literal(1).nullish(),
  })
  .loose();

export type ChatRequest = z.infer<typeof ChatRequestSchema>;
type ChatMessage = ChatRequest['messages'][number];
type ContentPart = z.infer<typeof ContentPartSchema>;

/** What a request asks for (domain/promptKinds.ts): picks the reply writer (and counts it in the stats). */
export const REQUEST_KINDS = PROMPT_KINDS;
export type RequestKind = (typeof REQUEST_KINDS)[number];

/** Knobs for reply content (not transport faults); the server takes them from its FaultConfig. */
export interface ReplyTuning {
  /** Probability that an answer follows each constraint it recognises. */
  complianceRate: number;
  /** Probability that a judge passes what it cannot check itself. */
  judgeLeniency: number;
  /** Per later turn, the share of a persistent chat instruction's pull that survives (answers.ts writeChatAnswer). */
  persistence: number;
}

export const DEFAULT_TUNING: Readonly<ReplyTuning> = Object.freeze({ complianceRate: 0.9, judgeLeniency: 0.9, persistence: 0.97 });

type FinishReason = 'stop' | 'length';

export interface Reply {
  id: string;
  kind: RequestKind;
  content: string;
  finishReason: FinishReason;
}

// ---------------------------------------------------------------------------------------
// Request hashing

/** JSON with object keys sorted at every level, so key order in the request never matters. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalize(value));
}

function canonicalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalize);
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, canonicalize(record[key])]),
  );
}

/** max_completion_tokens is the newer name of max_tokens; both mean the same limit. */
export function tokenLimit(request: ChatRequest): number | undefined {
  return request.max_completion_tokens ?? request.max_tokens ?? undefined;
}

/**
 * Hash of the request fields that determine a reply (the simulator's own seed is mixed in
 * later). The request `seed` is only part of it when sent, so keys of seedless requests stay
 * what they were; an image's id (llm/imageIds.ts) is a cache hint, not content, and is left out.
 */
export function requestKey(request: ChatRequest): string {
  return sha256Hex(
    canonicalJson({
      model: request.model,
      messages: withoutImageIds(request.messages),
      response_format: request.response_format ?? null,
      temperature: request.temperature ?? null,
      max_tokens: tokenLimit(request) ?? null,
      ...(request.seed == null ? {} : { seed: request.seed }),
    }),
  );
}

// ---------------------------------------------------------------------------------------
// Prompt text and usage

function partsOf(message: ChatMessage): ContentPart[] {
  if (typeof message.content === 'string') return [{ type: 'text', text: message.content }];
  return message.content ?? [];
}

function textOf(messages: readonly ChatMessage[]): string {
  return messages
    .flatMap(partsOf)
    .map((part) => (part.type === 'text' ? part.text : ''))
    .filter((text) => text !== '')
    .join('\n');
}

/** The answer prompt is the last user turn; earlier turns (a repair round trip) are context. */
function lastUserText(request: ChatRequest): string {
  const users = request.messages.filter((message) => message.role === 'user');
  return textOf(users.slice(-1));
}

/** The chat's user turns without its standing rule, which is sent as a part of the first turn (prompts/chat.ts). */
function userTexts(request: ChatRequest): string[] {
  return request.messages.filter((message) => message.role === 'user').map((message) => textOf([{ ...message, content: partsOf(message).filter((part) => !isChatRule(part)) }]));
}

const isChatRule = (part: ContentPart) => part.type === 'text' && part.text.startsWith(MULTITURN_SYSTEM_TEXT);

/** Each image part's tokens by model, once read: a reply counts them for the rate limit, usage, the prompt cache and the GPU's work. */
const partTokens = new WeakMap<object, { model: string; tokens: number }>();

/**
 * The tokens of an image part: `flat` when the simulator was given one (SIM_IMAGE_TOKENS), else what
 * the request's model family counts for the image's size and detail (llm/imageTokens.ts), which
 * decodes the image's header: once per part object (a request is parsed once).
 */
export function imagePartTokens(model: string, part: { image_url: { url: string; detail?: 'auto' | 'low' | 'high' | undefined } }, flat?: number): number {
  if (flat !== undefined) return flat;
  const known = partTokens.get(part);
  if (known?.model === model) return known.tokens;
  const tokens = imageUrlTokens(model, part.image_url.url, part.image_url.detail);
  partTokens.set(part, { model, tokens });
  return tokens;
}

/** ≈ ceil(chars / 4) over all text parts, plus each image part's tokens (imagePartTokens). */
export function promptTokens(request: ChatRequest, flatImageTokens?: number): number {
  const parts = request.messages.flatMap(partsOf);
  const chars = parts.reduce((sum, part) => sum + (part.type === 'text' ? part.text.length : 0), 0);
  const images = parts.reduce((sum, part) => sum + (part.type === 'image_url' ? imagePartTokens(request.model, part, flatImageTokens) : 0), 0);
  return Math.ceil(chars / 4) + images;
}

export function completionTokens(content: string): number {
  return Math.ceil(content.length / 4);
}

// ---------------------------------------------------------------------------------------
// Request kind detection

const JSON_KINDS = ['instructions', 'chat_questions', 'refined_instruction', 'constraints', 'compatibility', 'verifier_selection', 'image_tags'] as const;
type JsonKind = (typeof JSON_KINDS)[number];

function isJsonKind(name: string | undefined): name is JsonKind {
  return (JSON_KINDS as readonly string[]).includes(name ?? '');
}

/**
 * What a request asks for, as the engine names it: `named` (its x-mmif-request-kind header, or a
 * batch line's custom_id: llm/batch.ts), else its reply schema's name, else an answer. Never from
 * the prompt's wording, so rewording a prompt cannot change how it is answered. A server stepped
 * down from json_schema (dialects.ts) sends no schema name: the header still names the kind.
 */
export function detectKind(request: ChatRequest, named?: string | string[]): RequestKind {
  const header = Array.isArray(named) ? named[0] : named;
  if (isPromptKind(header)) return header;
  const schemaName = request.response_format?.json_schema?.name;
  return isJsonKind(schemaName) ? schemaName : 'answer';
}

// ---------------------------------------------------------------------------------------
// Reply generation

/** `kind`: what the request asks for (detectKind), as the server found it on arrival. */
export function generateReply(request: ChatRequest, seed: number, tuning: ReplyTuning = DEFAULT_TUNING, key = requestKey(request), kind = detectKind(request)): Reply {
  const hash = sha256Hex(`reply\u0000${seed}\u0000${key}`);
  const rng = rngFromHex(hash);
  const content = KIND_WRITERS[kind](request, rng, tuning);
  return { id: `chatcmpl-sim-${hash.slice(0, 16)}`, kind, ...limitLength(content, tokenLimit(request)) };
}

const KIND_WRITERS: Record<RequestKind, (request: ChatRequest, rng: Rng, tuning: ReplyTuning) => string> = {
  instructions: (_request, rng) => JSON.stringify({ instructions: writeInstructions(rng) }),
  chat_questions: (request, rng) => JSON.stringify({ questions: writeChatQuestions(askedCount(textOf(request.messages)), rng) }),
  refined_instruction: (request) => JSON.stringify({ instruction: refineQuestion(textOf(request.messages)) }),
  constraints: (request, rng) => JSON.stringify({ constraints: writeConstraints(parseOfferedConstraints(textOf(request.messages)), rng) }),
  compatibility: (request, rng) => JSON.stringify(judgeCompatibility(parseNumberedConstraints(textOf(request.messages)), rng)),
  answer: (request, rng, tuning) => writeAnswer(parseAnswerPrompt(lastUserText(request)), rng, tuning.complianceRate),
  chat_answer: (request, rng, tuning) => writeChatAnswer(userTexts(request), rng, tuning),
  direct_judge: (request, rng, tuning) => writeDirectJudgement(parseDirectJudgePrompt(textOf(request.messages)), rng, tuning.judgeLeniency),
  compare_judge: (request, rng, tuning) => writeCompareJudgement(parseCompareJudgePrompt(textOf(request.messages)), rng, tuning.judgeLeniency),
  verifier_selection: (request, rng) => writeVerifierSelection(parseVerifierSelectionPrompt(textOf(request.messages)), rng),
  image_tags: (request, rng) => JSON.stringify({ tags: writeImageTags(imageBytesOf(request), rng) }),
};

const TAG_WORDS = [
  'sky',
  'tree',
  'building',
  'person',
  'car',
  'road',
  'water',
  'cloud',
  'grass',
  'window',
  'light',
  'sign',
  'table',
  'chair',
  'food',
  'bottle',
  'flower',
  'mountain',
  'boat',
  'bird',
  'dog',
  'street',
  'night',
  'sunset',
  'blue',
  'red',
  'green',
  'white',
  'wooden',
  'bright',
  'dark',
  'outdoor',
  'indoor',
  'city',
  'beach',
  'forest',
];

/** Bytes of the request's image, from the length of its base64 data URL (0 without one). */
function imageBytesOf(request: ChatRequest): number {
  const url = request.messages.flatMap(partsOf).find((p) => p.type === 'image_url');
  if (!url || url.type !== 'image_url') return 0;
  const comma = url.image_url.url.indexOf(',');
  return Math.floor(((url.image_url.url.length - comma - 1) * 3) / 4);
}

/**
 * Simulated tagging, deterministic per image: a JPEG's size grows with its detail, so the tag count
 * grows with the image's compressed size (about 3 more per doubling above 1 KB), plus a little noise.
 * One tag is sometimes repeated in another case, as models do, to exercise de-duplication.
 */
function writeImageTags(bytes: number, rng: Rng): string[] {
  const count = Math.max(1, Math.min(TAG_WORDS.length, 2 + Math.floor(3 * Math.log2(Math.max(1, bytes / 1024))) + rng.int(0, 2)));
  const tags = rng.sample(TAG_WORDS, count);
  if (rng.chance(0.3)) tags.push(tags[0]!.toUpperCase());
  return tags;
}

/**
 * An open version of the prompt's original question (under REFINE_HEADINGS.question): the question itself, asked to be
 * explained, as the pipeline's refinement stage requests of short factoid questions.
 */
function refineQuestion(prompt: string): string {
  const question = section(prompt, 'refined_instruction', REFINE_HEADINGS.question, '\n\n## ').trim();
  return `${question.replace(/\?$/, '')}? Explain your answer with reference to what the image shows.`;
}

/** Mimics a model hitting its token budget: ~4 chars per token. */
function limitLength(content: string, maxTokens: number | undefined): Pick<Reply, 'content' | 'finishReason'> {
  if (maxTokens === undefined || content.length <= maxTokens * 4) return { content, finishReason: 'stop' };
  return { content: content.slice(0, maxTokens * 4), finishReason: 'length' };
}

/** Fault: the content is cut to about half, as when a connection or generation is cut short. */
export function truncateReply(reply: Reply): Reply {
  return { ...reply, content: reply.content.slice(0, Math.ceil(reply.content.length / 2)), finishReason: 'length' };
}

/**
 * Fault: JSON requests get chatty, single-quoted, unterminated pseudo-JSON that neither
 * JSON.parse nor "extract the {...} block" heuristics can recover; prose (answers and judge
 * verdicts) comes back empty.
 */
export function malformReply(reply: Reply): Reply {
  if (!isJsonKind(reply.kind)) return { ...reply, content: '' };
  return { ...reply, content: `Here is the JSON you asked for: ${reply.content.slice(0, -1).replaceAll('"', "'")}` };
}

/** The OpenAI `chat.completion` object; usage is computed from the final (possibly faulted) content. */
export function completionBody(request: ChatRequest, reply: Reply, flatImageTokens?: number) {
  const prompt = promptTokens(request, flatImageTokens);
  const completion = completionTokens(reply.content);
  return {
    id: reply.id,
    object: 'chat.completion' as const,
    // Fixed so identical requests give byte-identical responses.
    created: 0,
    model: request.model,
    system_fingerprint: SIMULATOR_FINGERPRINT,
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: reply.content, refusal: null },
        logprobs: null,
        finish_reason: reply.finishReason,
      },
    ],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

// ---------------------------------------------------------------------------------------
// Kind: instructions

const INSTRUCTION_TEMPLATES = [
  'Describe the {aspect} of the {subject} in this image.',
  'What story could this image tell about the {subject}?',
  'Explain the role of the {aspect} in shaping the mood of the scene.',
  'Write a short poem inspired by the {subject} in the picture.',
  'Imagine you are standing in this scene. What do you notice first, and why?',
  'Compare the {subject} with the background elements of the image.',
  'Write a travel blog entry based on what this image shows.',
  'Analyze the composition of this photograph, focusing on the {aspect}.',
  'What might have happened just before this picture was taken?',
  'Suggest a caption for this image and explain your choice.',
  'Describe the image to someone who cannot see it, paying attention to the {aspect}.',
  'What emotions does the {subject} evoke, and which visual details create them?',
  'Write a short advertisement inspired by the {subject} in this image.',
  'Discuss what this scene suggests about the time of day and the season.',
];
const INSTRUCTION_SUBJECTS = ['main subject', 'people', 'setting', 'foreground objects', 'landscape', 'central figure', 'architecture'];
const INSTRUCTION_ASPECTS = ['colors', 'lighting', 'textures', 'atmosphere', 'spatial layout', 'small details'];

function writeInstructions(rng: Rng): string[] {
  return rng
    .sample(INSTRUCTION_TEMPLATES, rng.int(3, 6))
    .map((template) => template.replace('{subject}', rng.pick(INSTRUCTION_SUBJECTS)).replace('{aspect}', rng.pick(INSTRUCTION_ASPECTS)));
}

// ---------------------------------------------------------------------------------------
// Kind: chat questions (multiturn builds)

const QUESTION_TEMPLATES = [
  'What is the {subject} doing in this image?',
  'Which colors stand out most in the {subject}, and where do they appear?',
  'How is the {aspect} of the scene arranged from left to right?',
  'What can you tell about the {aspect} in the background?',
  'Which objects are closest to the camera, and what are they?',
  'What does the {aspect} suggest about the time of day?',
  'How would you describe the textures visible on the {subject}?',
  'What is the largest object in the picture, and what surrounds it?',
  'Which details of the {subject} would someone notice only on a second look?',
  'How do the {subject} and the background relate to each other?',
  'What kind of place does this image show, and which details tell you so?',
  'Is there any text or sign visible, and what does it say about the scene?',
  'What mood does the {aspect} create, and which details create it?',
  'How many distinct groups of objects can you see, and what are they?',
  'What materials seem to be used in the {subject}?',
  'Where does the light come from, and how does it fall on the {subject}?',
  'What is happening at the edges of the frame?',
  'Which part of the image draws the eye first, and why?',
  'How would the scene look from the opposite side?',
  'What season or weather does the {aspect} point to?',
  'What shapes repeat across the image?',
  'How does the {aspect} differ between the top and the bottom of the image?',
];

/** The count the questions prompt asks for (the number after CHAT_QUESTIONS_LABELS.count). */
function askedCount(prompt: string): number {
  const n = Number(/^\s*(\d+)/.exec(section(prompt, 'chat_questions', CHAT_QUESTIONS_LABELS.count))?.[1] ?? 5);
  return Math.max(1, Math.min(n, QUESTION_TEMPLATES.length));
}

/** N distinct questions: distinct templates, so no two turns ask the same thing. */
function writeChatQuestions(count: number, rng: Rng): string[] {
  return rng.sample(QUESTION_TEMPLATES, count).map((template) => template.replace('{subject}', rng.pick(INSTRUCTION_SUBJECTS)).replace('{aspect}', rng.pick(INSTRUCTION_ASPECTS)));
}

// ---------------------------------------------------------------------------------------
// Kind: constraints

interface OfferedConstraint {
  key: string;
  name: string;
  description: string;
  example: string | undefined;
}

/** Lines like `- paragraph_number_limit (C.1 Paragraph limit): Description. Example: "..."`. */
export function parseOfferedConstraints(text: string): OfferedConstraint[] {
  const byKey = new Map<string, OfferedConstraint>();
  for (const match of text.matchAll(/^- ([a-z_]+) \(([^)]*)\):\s*(.*)$/gm)) {
    const [, key = '', name = '', rest = ''] = match;
    const example = textAfter(rest, CONSTRAINT_LINE_LABELS.example);
    const description = example === undefined ? rest : rest.slice(0, rest.indexOf(CONSTRAINT_LINE_LABELS.example));
    if (!byKey.has(key)) byKey.set(key, { key, name, description: description.trim(), example: unquote(example) });
  }
  return [...byKey.values()];
}

function unquote(text: string | undefined): string | undefined {
  const trimmed = text
    ?.trim()
    .replace(/^["“]|["”]$/g, '')
    .trim();
  return trimmed === '' ? undefined : trimmed;
}

const MENTION_WORDS = ['light', 'color', 'shadow', 'texture', 'harmony', 'detail', 'moment'];
const AVOID_WORDS = ['beautiful', 'nice', 'very', 'picture', 'amazing', 'stunning', 'interesting'];
const PREFIXES = ['In this image', 'At first glance', 'Looking closely', 'Interestingly'];
const TONES = ['warm and friendly', 'formal', 'enthusiastic', 'calm and reflective', 'humorous'];
const AUDIENCES = ['young children', 'art students', 'travelers planning a trip', 'professional photographers'];
const PERSPECTIVES = ['first-person', 'second-person', 'third-person'];
const WRAP_UPS = ['In summary', 'All in all', 'To conclude'];

/** Concrete, deterministic sentences for the common keys; other keys fall back to their example. */
const CONSTRAINT_WRITERS: Record<string, (rng: Rng) => string> = {
  paragraph_number_limit: (rng) => `Your response must consist of exactly ${rng.int(2, 4)} paragraphs.`,
  sentence_number_limit: (rng) => {
    const low = rng.int(2, 4);
    return `Each paragraph should contain between ${low} and ${low + rng.int(1, 3)} sentences.`;
  },
  word_count_range_limit: (rng) => {
    const low = rng.int(6, 20) * 10;
    return `Your response must be between ${low} and ${low + rng.int(5, 15) * 10} words in total.`;
  },
  mention: (rng) => `Mention the word '${rng.pick(MENTION_WORDS)}' at least twice.`,
  not_mention: (rng) => `Do not mention the words '${rng.sample(AVOID_WORDS, 2).join("' or '")}'.`,
  prefix_and_suffix: (rng) => `Start your answer with '${rng.pick(PREFIXES)}'`,
  tone_requirement: (rng) => `Use a ${rng.pick(TONES)} tone throughout your response.`,
  target_audience_requirement: (rng) => `Write your response for ${rng.pick(AUDIENCES)}.`,
  perspective_requirement: (rng) => `Write your response from a ${rng.pick(PERSPECTIVES)} perspective.`,
  title_requirements: () => 'Give your response a title wrapped in double angular brackets, such as <<title>>.',
  wrap_up_requirement: (rng) => `End your response with a one-sentence summary that begins with '${rng.pick(WRAP_UPS)}'.`,
};

function writeConstraints(offered: readonly OfferedConstraint[], rng: Rng): Array<{ type: string; value: string }> {
  const count = offered.length <= 4 ? offered.length : rng.int(4, Math.min(9, offered.length));
  const chosen = new Set(rng.sample(offered, count));
  // Prompt order reads more naturally than draw order.
  return offered.filter((item) => chosen.has(item)).map((item) => ({ type: item.key, value: constraintValue(item, rng) }));
}

function constraintValue(item: OfferedConstraint, rng: Rng): string {
  const writer = CONSTRAINT_WRITERS[item.key];
  if (writer) return writer(rng);
  return item.example ?? (item.description || `Follow the ${item.name} requirement.`);
}

// ---------------------------------------------------------------------------------------
// Kind: compatibility

interface NumberedConstraint {
  index: number;
  type: string;
  value: string;
}

/** Lines like `3. [tone_requirement] Use a formal tone.`. */
function parseNumberedConstraints(text: string): NumberedConstraint[] {
  const byIndex = new Map<number, NumberedConstraint>();
  for (const match of text.matchAll(/^\s*(\d+)\.\s*\[([^\]]+)\]\s*(.*)$/gm)) {
    const index = Number(match[1]);
    if (!byIndex.has(index)) byIndex.set(index, { index, type: match[2] ?? '', value: match[3] ?? '' });
  }
  return [...byIndex.values()];
}

const DROP_REASONS = [
  (victim: NumberedConstraint, other: NumberedConstraint) =>
    `Constraint ${victim.index} [${victim.type}] conflicts with constraint ${other.index} [${other.type}]; both cannot be satisfied at once.`,
  (victim: NumberedConstraint, other: NumberedConstraint) => `Constraint ${victim.index} [${victim.type}] is redundant given constraint ${other.index} [${other.type}].`,
  (victim: NumberedConstraint, other: NumberedConstraint) => `Constraint ${victim.index} [${victim.type}] makes constraint ${other.index} [${other.type}] impractical to follow.`,
];

/** Usually keeps everything; ~25% of the time drops exactly one (only when there is another to blame). */
function judgeCompatibility(items: readonly NumberedConstraint[], rng: Rng) {
  const dropsOne = items.length >= 2 && rng.chance(0.25);
  if (!dropsOne) return { keep: items.map((item) => item.index), dropped: [] };
  const victim = rng.pick(items);
  const other = rng.pick(items.filter((item) => item !== victim));
  return {
    keep: items.filter((item) => item !== victim).map((item) => item.index),
    dropped: [{ index: victim.index, reason: rng.pick(DROP_REASONS)(victim, other) }],
  };
}
