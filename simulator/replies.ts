/**
 * Pure, deterministic reply generation for the simulator: no I/O, no clock, no global
 * state. Every reply is a function of (seed, request), so tests and benchmarks can compare
 * runs byte for byte.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

export const SIMULATOR_FINGERPRINT = 'mmif-simulator';

/** Prompt tokens charged per image part, a flat rate like low-detail images in the OpenAI API. */
export const IMAGE_PART_TOKENS = 85;

// ---------------------------------------------------------------------------------------
// Request shape

const TextPartSchema = z.object({ type: z.literal('text'), text: z.string() }).loose();
const ImagePartSchema = z
  .object({
    type: z.literal('image_url'),
    image_url: z
      .object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() })
      .loose(),
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
  })
  .loose();

export type ChatRequest = z.infer<typeof ChatRequestSchema>;
type ChatMessage = ChatRequest['messages'][number];
type ContentPart = z.infer<typeof ContentPartSchema>;

export type Stage = 'instructions' | 'constraints' | 'compatibility' | 'answer';
export const STAGES: readonly Stage[] = ['instructions', 'constraints', 'compatibility', 'answer'];

export type FinishReason = 'stop' | 'length';

export interface Reply {
  id: string;
  stage: Stage;
  content: string;
  finishReason: FinishReason;
}

// ---------------------------------------------------------------------------------------
// Hashing and PRNG

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

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
function tokenLimit(request: ChatRequest): number | undefined {
  return request.max_completion_tokens ?? request.max_tokens ?? undefined;
}

/** Seed-free hash of the request fields that determine a reply. */
export function requestKey(request: ChatRequest): string {
  return sha256Hex(
    canonicalJson({
      model: request.model,
      messages: request.messages,
      response_format: request.response_format ?? null,
      temperature: request.temperature ?? null,
      max_tokens: tokenLimit(request) ?? null,
    }),
  );
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** Up to `k` distinct items in random order. */
  sample<T>(items: readonly T[], k: number): T[];
  chance(probability: number): boolean;
}

/**
 * sfc32 seeded from the first 128 bits of a hex hash: tiny, fast and identical on every
 * platform, unlike Math.random.
 */
export function rngFromHex(hex: string): Rng {
  const words = [0, 8, 16, 24].map((at) => Number.parseInt(hex.slice(at, at + 8).padEnd(8, '0'), 16) | 0);
  let [a, b, c, d] = words as [number, number, number, number];
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  // Mix the state before use so seeds sharing a prefix diverge.
  for (let i = 0; i < 12; i++) next();
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    pick<T>(items: readonly T[]): T {
      const item = items[int(0, items.length - 1)];
      if (item === undefined) throw new Error('pick() from an empty list');
      return item;
    },
    sample<T>(items: readonly T[], k: number): T[] {
      const pool = [...items];
      const out: T[] = [];
      while (out.length < k && pool.length > 0) out.push(...pool.splice(int(0, pool.length - 1), 1));
      return out;
    },
    chance: (probability) => next() < probability,
  };
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

/** ≈ ceil(chars / 4) over all text parts, plus a flat charge per image part. */
export function promptTokens(request: ChatRequest): number {
  const parts = request.messages.flatMap(partsOf);
  const chars = parts.reduce((sum, part) => sum + (part.type === 'text' ? part.text.length : 0), 0);
  const images = parts.filter((part) => part.type === 'image_url').length;
  return Math.ceil(chars / 4) + images * IMAGE_PART_TOKENS;
}

export function completionTokens(content: string): number {
  return Math.ceil(content.length / 4);
}

// ---------------------------------------------------------------------------------------
// Stage detection

const JSON_STAGES = ['instructions', 'constraints', 'compatibility'] as const;
type JsonStage = (typeof JSON_STAGES)[number];

const STAGE_MARKERS: ReadonlyArray<[JsonStage, string]> = [
  ['instructions', 'You are an expert in generating concise instructions for images'],
  ['constraints', 'You are an expert in add appropriate constraints'],
  ['compatibility', 'You are checking a list of constraints for conflicts'],
];

function isJsonStage(name: string | undefined): name is JsonStage {
  return (JSON_STAGES as readonly string[]).includes(name ?? '');
}

/** The schema name wins; prompt markers cover pipelines configured without structured output. */
export function detectStage(request: ChatRequest): Stage {
  const schemaName = request.response_format?.json_schema?.name;
  if (isJsonStage(schemaName)) return schemaName;
  const text = textOf(request.messages);
  return STAGE_MARKERS.find(([, marker]) => text.includes(marker))?.[0] ?? 'answer';
}

// ---------------------------------------------------------------------------------------
// Reply generation

export function generateReply(request: ChatRequest, seed: number, key = requestKey(request)): Reply {
  const hash = sha256Hex(`reply\u0000${seed}\u0000${key}`);
  const rng = rngFromHex(hash);
  const stage = detectStage(request);
  const content = STAGE_WRITERS[stage](request, rng);
  return { id: `chatcmpl-sim-${hash.slice(0, 16)}`, stage, ...limitLength(content, tokenLimit(request)) };
}

const STAGE_WRITERS: Record<Stage, (request: ChatRequest, rng: Rng) => string> = {
  instructions: (_request, rng) => JSON.stringify({ instructions: writeInstructions(rng) }),
  constraints: (request, rng) =>
    JSON.stringify({ constraints: writeConstraints(parseOfferedConstraints(textOf(request.messages)), rng) }),
  compatibility: (request, rng) =>
    JSON.stringify(judgeCompatibility(parseNumberedConstraints(textOf(request.messages)), rng)),
  answer: (request, rng) => writeAnswer(parseAnswerPrompt(lastUserText(request)), rng),
};

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
 * Fault: JSON stages get chatty, single-quoted, unterminated pseudo-JSON that neither
 * JSON.parse nor "extract the {...} block" heuristics can recover; answers come back empty.
 */
export function malformReply(reply: Reply): Reply {
  if (reply.stage === 'answer') return { ...reply, content: '' };
  return { ...reply, content: `Here is the JSON you asked for: ${reply.content.slice(0, -1).replaceAll('"', "'")}` };
}

/** The OpenAI `chat.completion` object; usage is computed from the final (possibly faulted) content. */
export function completionBody(request: ChatRequest, reply: Reply) {
  const prompt = promptTokens(request);
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
// Stage: instructions

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
    .map((template) =>
      template
        .replace('{subject}', rng.pick(INSTRUCTION_SUBJECTS))
        .replace('{aspect}', rng.pick(INSTRUCTION_ASPECTS)),
    );
}

// ---------------------------------------------------------------------------------------
// Stage: constraints

export interface OfferedConstraint {
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
    const [description = '', example] = rest.split(/\s*Example:\s*/, 2);
    if (!byKey.has(key)) byKey.set(key, { key, name, description: description.trim(), example: unquote(example) });
  }
  return [...byKey.values()];
}

function unquote(text: string | undefined): string | undefined {
  const trimmed = text?.trim().replace(/^["“]|["”]$/g, '').trim();
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
  return offered
    .filter((item) => chosen.has(item))
    .map((item) => ({ type: item.key, value: constraintValue(item, rng) }));
}

function constraintValue(item: OfferedConstraint, rng: Rng): string {
  const writer = CONSTRAINT_WRITERS[item.key];
  if (writer) return writer(rng);
  return item.example ?? (item.description || `Follow the ${item.name} requirement.`);
}

// ---------------------------------------------------------------------------------------
// Stage: compatibility

export interface NumberedConstraint {
  index: number;
  type: string;
  value: string;
}

/** Lines like `3. [tone_requirement] Use a formal tone.`. */
export function parseNumberedConstraints(text: string): NumberedConstraint[] {
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
  (victim: NumberedConstraint, other: NumberedConstraint) =>
    `Constraint ${victim.index} [${victim.type}] is redundant given constraint ${other.index} [${other.type}].`,
  (victim: NumberedConstraint, other: NumberedConstraint) =>
    `Constraint ${victim.index} [${victim.type}] makes constraint ${other.index} [${other.type}] impractical to follow.`,
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

// ---------------------------------------------------------------------------------------
// Stage: answer

export interface AnswerPrompt {
  instruction: string;
  constraints: string[];
}

function lastUserText(request: ChatRequest): string {
  const users = request.messages.filter((message) => message.role === 'user');
  return textOf(users.slice(-1));
}

/** "## Task Description\n<instruction>\n\n## Constraints\n...\n1. <constraint>\n2. ..." */
export function parseAnswerPrompt(text: string): AnswerPrompt {
  const task = /## Task Description\s*\n([\s\S]*?)(?=\n\s*## Constraints|$)/.exec(text);
  const constraintsAt = text.indexOf('## Constraints');
  const constraintText = constraintsAt >= 0 ? text.slice(constraintsAt) : '';
  return {
    instruction: (task?.[1] ?? text).trim(),
    constraints: [...constraintText.matchAll(/^\s*\d+\.\s+(.*)$/gm)].map((match) => (match[1] ?? '').trim()),
  };
}

const NUMBER_WORDS: Record<string, number> = {
  one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
};

function requiredParagraphs(constraints: readonly string[]): number | undefined {
  for (const constraint of constraints) {
    const word = /exactly (\w+) paragraphs?\b/i.exec(constraint)?.[1]?.toLowerCase();
    const count = word === undefined ? undefined : (NUMBER_WORDS[word] ?? Number(word));
    if (count !== undefined && Number.isInteger(count) && count >= 1 && count <= 20) return count;
  }
  return undefined;
}

/** The closing quote must be followed by a boundary, so apostrophes inside X ("Let's") survive. */
function requiredPrefix(constraints: readonly string[]): string | undefined {
  for (const constraint of constraints) {
    const match = /start (?:your )?(?:answer|response) with ['"‘“](.+?)['"’”](?=[\s.,;:!?]|$)/i.exec(constraint);
    if (match?.[1]) return match[1];
  }
  return undefined;
}

const STOPWORDS = new Set([
  'about', 'above', 'after', 'again', 'also', 'based', 'being', 'could', 'describe', 'does', 'each',
  'explain', 'from', 'have', 'image', 'into', 'might', 'picture', 'photo', 'should', 'some', 'that',
  'their', 'there', 'these', 'this', 'what', 'when', 'where', 'which', 'while', 'with', 'would', 'write', 'your',
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

const SENTENCE_TEMPLATES = [
  'The scene centres on the {adj} {noun} set against the {place}.',
  'When it comes to {kw} details, the most striking element is the {noun} near the {place}.',
  'Soft {light} light falls across the {noun}, giving the whole view a {feeling} quality.',
  'The {kw} elements are easy to overlook at first, yet they tie the composition together.',
  'Details such as the {adj} edges of the {noun} reward a second look.',
  'Against the {place}, the {noun} feels both {adj} and {feeling}.',
  'A closer reading of the {kw} aspects suggests a story that continues beyond the frame.',
  'The balance between the {noun} and the {place} keeps the eye moving.',
  'Colors shift gently from the {place} toward the {noun}, reinforcing the {feeling} mood.',
  'Nothing about the {kw} elements feels staged; the moment seems genuinely {feeling}.',
  'The {light} light emphasizes texture on the {noun} and depth in the {place}.',
  'Taken together, the {kw} elements and the {noun} create a {feeling} impression.',
];
const ADJECTIVES = ['weathered', 'bright', 'quiet', 'textured', 'slender', 'rounded', 'vivid', 'muted'];
const NOUNS = ['figure', 'doorway', 'tree', 'bicycle', 'table', 'boat', 'lamp', 'wall', 'path', 'window'];
const PLACES = ['open sky', 'distant hills', 'busy street', 'calm water', 'stone courtyard', 'green field'];
const LIGHTS = ['morning', 'golden', 'diffuse', 'late-afternoon', 'overcast', 'warm'];
const FEELINGS = ['peaceful', 'lively', 'nostalgic', 'hopeful', 'contemplative', 'tender'];

function writeSentence(keywords: readonly string[], rng: Rng): string {
  const slots: Record<string, () => string> = {
    kw: () => rng.pick(keywords),
    adj: () => rng.pick(ADJECTIVES),
    noun: () => rng.pick(NOUNS),
    place: () => rng.pick(PLACES),
    light: () => rng.pick(LIGHTS),
    feeling: () => rng.pick(FEELINGS),
  };
  return rng.pick(SENTENCE_TEMPLATES).replace(/\{(\w+)\}/g, (slot, name: string) => slots[name]?.() ?? slot);
}

function writeAnswer(prompt: AnswerPrompt, rng: Rng): string {
  const keywords = instructionKeywords(prompt.instruction);
  const paragraphCount = requiredParagraphs(prompt.constraints) ?? rng.int(2, 3);
  const paragraphs = Array.from({ length: paragraphCount }, () =>
    Array.from({ length: rng.int(2, 5) }, () => writeSentence(keywords, rng)).join(' '),
  );
  const text = paragraphs.join('\n\n');
  const prefix = requiredPrefix(prompt.constraints);
  return prefix === undefined ? text : withPrefix(prefix, text);
}

/** "In this image" + "The scene…" reads as "In this image, the scene…". */
function withPrefix(prefix: string, text: string): string {
  if (!/[A-Za-z0-9]$/.test(prefix)) return `${prefix} ${text}`;
  return `${prefix}, ${text.charAt(0).toLowerCase()}${text.slice(1)}`;
}
