import { REQUEST_KIND_HEADER, type PromptKind } from '../../domain/promptKinds.js';
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { DEFAULT_FAULTS } from '../../simulator/faults.js';
import { ChatRequestSchema, generateReply } from '../../simulator/replies.js';
import { simulatorOptionsFromEnv, startSimulator, type SimulatorHandle } from '../../simulator/server.js';

const SEED = 7;
let sim: SimulatorHandle;
let client: OpenAI;

before(async () => {
  sim = await startSimulator({ seed: SEED });
  client = new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 });
});

after(async () => {
  await sim.close();
});

// Tests share one server, so each starts from default faults and zeroed stats.
beforeEach(() => {
  sim.setFaults({ ...DEFAULT_FAULTS });
  sim.resetStats();
});

// ---------------------------------------------------------------------------------------
// Prompts and helpers

const IMAGE_URL =
  'data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////2wBDAf//////////////////////////////////////////////////////////////////////////////////////wAARCAABAAEDASIAAhEBAxEB/8QAFQABAQAAAAAAAAAAAAAAAAAAAAP/xAAUEAEAAAAAAAAAAAAAAAAAAAAA/8QAFAEBAAAAAAAAAAAAAAAAAAAAAP/EABQRAQAAAAAAAAAAAAAAAAAAAAD/2gAMAwEAAhEDEQA/AKAA/9k=';

const OFFERED_LINES = [
  '- paragraph_number_limit (C.1 Paragraph limit): Constraint that specifies the number of paragraphs in the response. Example: "Your response must consist of exactly 4 paragraphs."',
  '- sentence_number_limit (C.2 Sentence limit): Number of sentences per paragraph. Example: "Each paragraph should contain 3 sentences."',
  '- word_count_range_limit (C.3 Word count): Total words. Example: "Your response must be between 100 and 200 words."',
  '- mention (K.1 Mention): A word that must appear. Example: "Mention the word \'sky\' at least twice."',
  '- not_mention (K.2 Not mention): Words to avoid. Example: "Do not mention the word \'blue\'."',
  '- prefix_and_suffix (A.1 Prefix): How the answer starts. Example: "Start your answer with \'Well\'"',
  '- tone_requirement (T.1 Tone): The tone. Example: "Use a formal tone."',
  '- target_audience_requirement (T.2 Audience): The reader. Example: "Write for children."',
  '- perspective_requirement (T.3 Perspective): The point of view. Example: "Write in the first person."',
  '- title_requirements (F.1 Title): A title. Example: "Add a title in <<double angular brackets>>."',
  '- emoji_usage (F.2 Emoji): Emoji use. Example: "Use exactly one emoji in your response."',
  '- table_format (F.3 Table): A table. Example: "Include a markdown table with two columns."',
];
const OFFERED_KEYS = OFFERED_LINES.map((line) => /^- ([a-z_]+) \(/.exec(line)?.[1]);

function constraintsPrompt(lines: readonly string[], topic: string): string {
  return `You are an expert in add appropriate constraints to the instruction.\nInstruction: Describe ${topic}.\nConstraint types:\n${lines.join('\n')}`;
}

function compatibilityPrompt(count: number, topic: string): string {
  const lines = Array.from({ length: count }, (_, i) => `${i + 1}. [type_${i + 1}] Constraint number ${i + 1} about ${topic}.`);
  return `You are checking a list of constraints for conflicts.\n${lines.join('\n')}`;
}

function answerPrompt(instruction: string, constraints: readonly string[]): string {
  const numbered = constraints.map((constraint, i) => `${i + 1}. ${constraint}`).join('\n');
  return `## Task Description\n${instruction}\n\n## Constraints\nYou must strictly follow the constraints below:\n${numbered}`;
}

function userRequest(text: string, extra: Partial<ChatCompletionCreateParamsNonStreaming> = {}): ChatCompletionCreateParamsNonStreaming {
  return { model: 'sim-vlm', messages: [{ role: 'user', content: text }], ...extra };
}

function jsonSchemaFormat(name: string): ChatCompletionCreateParamsNonStreaming['response_format'] {
  return { type: 'json_schema', json_schema: { name, schema: { type: 'object' } } };
}

function firstChoice(completion: ChatCompletion): ChatCompletion.Choice {
  const choice = completion.choices[0];
  assert.ok(choice, 'completion has a choice');
  return choice;
}

function contentOf(completion: ChatCompletion): string {
  const content = firstChoice(completion).message.content;
  assert.equal(typeof content, 'string');
  return content ?? '';
}

/** `kind`: what the request asks for, named in its header as the engine names it (llm/sendCompletion.ts). */
async function complete(body: ChatCompletionCreateParamsNonStreaming, kind?: PromptKind): Promise<ChatCompletion> {
  return client.chat.completions.create(body, kind ? { headers: { [REQUEST_KIND_HEADER]: kind } } : undefined);
}

function postRaw(body: string, path = '/chat/completions'): Promise<Response> {
  return fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
}

function adminUrl(path: string): string {
  return sim.url.replace(/\/v1$/, `/admin/${path}`);
}

const ErrorBody = z.object({
  error: z.object({ message: z.string().min(1), type: z.string().min(1), code: z.string().nullable() }),
});
const InstructionsReply = z.object({ instructions: z.array(z.string().min(5)).min(3).max(6) }).strict();
const ConstraintsReply = z.object({ constraints: z.array(z.object({ type: z.string(), value: z.string().min(1) }).strict()) }).strict();
const CompatibilityReply = z
  .object({
    keep: z.array(z.number().int()),
    dropped: z.array(z.object({ index: z.number().int(), reason: z.string().min(1) }).strict()),
  })
  .strict();
const VerifierSelectionReply = z.object({ calls: z.array(z.object({ func: z.string().min(1), params: z.array(z.unknown()) }).strict()) }).strict();

// Independent checks of the answer constraints, in the pipeline's terms: blank-line paragraphs,
// whitespace words, word-boundary keyword counts.
const paragraphsOf = (text: string) => text.split(/\n\s*\n/).filter((paragraph) => paragraph.trim() !== '');
/** Like Punkt, no break before a lowercase word ("Once upon a time... the"). */
const sentenceCount = (paragraph: string) => paragraph.split(/(?<=[.!?])\s+(?![a-z])/).filter((sentence) => sentence !== '').length;
const wordCount = (text: string) => text.split(/\s+/).filter((word) => word !== '').length;
const mentions = (text: string, word: string) => text.toLowerCase().match(new RegExp(`\\b${word}\\b`, 'g'))?.length ?? 0;
const numbersIn = (text: string) => text.match(/\d[\d,]*(?:\.\d+)?/g) ?? [];

type CheckedConstraint = [constraint: string, holds: (answer: string) => boolean];

/** Every phrasing family the answer writer recognises, in two sets that can hold together. */
const STRUCTURE_SET: CheckedConstraint[] = [
  ['Your response must consist of exactly 3 paragraphs.', (text) => paragraphsOf(text).length === 3],
  ['Each paragraph should contain between 2 and 4 sentences.', (text) => paragraphsOf(text).every((paragraph) => sentenceCount(paragraph) >= 2 && sentenceCount(paragraph) <= 4)],
  ['Your response must be between 80 and 150 words in total.', (text) => wordCount(text) >= 80 && wordCount(text) <= 150],
  ["Mention the word 'harmony' at least twice.", (text) => mentions(text, 'harmony') >= 2],
  ["Do not mention the words 'beautiful' or 'very'.", (text) => !/beautiful|very/i.test(text)],
  ["Start your answer with 'In this image'", (text) => text.startsWith('In this image')],
  ["End your response with 'Thank you for reading.'", (text) => text.endsWith('Thank you for reading.')],
  ['Keep two decimal places for all numbers in the answer.', (text) => numbersIn(text).every((n) => /\.\d{2}$/.test(n))],
];
const COUNTS_SET: CheckedConstraint[] = [
  ['Write exactly five paragraphs.', (text) => paragraphsOf(text).length === 5],
  ['Totally use 7 sentences in your response.', (text) => paragraphsOf(text).reduce((sum, p) => sum + sentenceCount(p), 0) === 7],
  ["Mention 'GreenTech' exactly three times throughout.", (text) => mentions(text, 'greentech') === 3],
  ['Do not use any numbers in your response.', (text) => numbersIn(text).length === 0],
  ['Your answer must contain at most 120 words.', (text) => wordCount(text) <= 120],
  ["Please start your answer with 'Once upon a time...'", (text) => text.startsWith('Once upon a time...')],
];
const TOPICS = ['the harbour at dawn', 'a busy market', 'a mountain lake', 'an old library', 'a city park', 'a farm at dusk'];

/** One answer per topic and set; returns each constraint's verdict per answer. */
async function answerVerdicts(extra: Partial<ChatCompletionCreateParamsNonStreaming> = {}): Promise<Array<[string, boolean]>> {
  const jobs = TOPICS.flatMap((topic) => [STRUCTURE_SET, COUNTS_SET].map((set) => ({ topic, set })));
  const answers = await Promise.all(
    jobs.map(({ topic, set }) =>
      complete(
        userRequest(
          answerPrompt(
            `Describe ${topic}.`,
            set.map(([constraint]) => constraint),
          ),
          extra,
        ),
      ),
    ),
  );
  return jobs.flatMap(({ set }, i) => {
    const text = contentOf(answers[i] as ChatCompletion);
    return set.map(([constraint, holds]): [string, boolean] => [constraint, holds(text)]);
  });
}

function directJudgePrompt(response: string, constraints: readonly string[]): string {
  const list = constraints.map((constraint, i) => `Constraint_${i + 1}: ${constraint}`).join('\n');
  return `Your task is to evaluate whether the response from an AI assistant adheres to all of the given constraints.\n\n<start of response>\n${response}\n<end of response>\n\n<start of constraint list>\n${list}\n<end of constraint list>\n\nYou should strictly follow the format below:\nJudgement: ...\nSummary: Score of constraint_1: x/1, ..., Score of constraint_n: x/1.`;
}

/** Tolerant like the pipeline's parser: markdown stripped, case and spacing ignored. */
function judgeScores(reply: string): Array<[index: number, score: number]> {
  const summary =
    reply
      .replaceAll('*', '')
      .split(/summary:/i)
      .at(-1) ?? '';
  return [...summary.matchAll(/score of constraint_(\d+)\s*:\s*(\d)\/1/gi)].map((m) => [Number(m[1]), Number(m[2])]);
}

function compareJudgePrompt(constraint: string, withConstraint: string, withoutConstraint: string): string {
  return `You are an expert in judging whether the response follow the given constraint. Return True or False.\n\nConstraint: ${constraint}\n\nResponse under the constraint: ${withConstraint}\n\nResponse without the constraint: ${withoutConstraint}\n\n**Please follow the steps below to evaluate**: ... End with a line "Summary: True" or "Summary: False".`;
}

/** The first true/false word after the last "summary", as the pipeline reads it. */
function compareVerdict(reply: string): boolean | undefined {
  const word = /\b(true|false)\b/i.exec(reply.split(/summary/i).at(-1) ?? '')?.[1];
  return word === undefined ? undefined : word.toLowerCase() === 'true';
}

const VERIFIER_FUNCTIONS = [
  'check_whether_response_paragraph_number_in_range(lower_bound:int, upper_bound:int) e.g. [3, 10000]',
  'check_whether_each_paragraph_sentence_number_in_range(lower_bound:int, upper_bound:int) e.g. [0, 2]',
  'check_whether_response_word_count_in_range(lower_bound:int, upper_bound:int) e.g. [50, 80]',
  'check_whether_whole_response_not_contain_certain_substrings(substrings:List[str]) e.g. [["apple", "banana"]]',
  'check_whether_whole_response_begin_with_certain_substring(substring:str) e.g. ["apple"]',
  'check_whether_keywords_mentioned_in_range(keywords:List[str], lower_bound_times:int, upper_bound_times:int) e.g. [["apple"], 3, 10000]',
];
const VERIFIER_NAMES = VERIFIER_FUNCTIONS.map((line) => line.slice(0, line.indexOf('(')));

function verifierPrompt(constraint: string): string {
  const list = VERIFIER_FUNCTIONS.map((line) => `- ${line}`).join('\n');
  return `Please analyze the following constraint and select the most appropriate function from the given list to verify this constraint.\n\nConstraint content: ${constraint}\n\nAvailable verification functions:\n${list}\n\n**Please return the result in JSON format as follows:**\n{"calls": [{"func": "<function name>", "params": [<positional parameters>]}]}`;
}

// ---------------------------------------------------------------------------------------
// Stages

test('instructions: the schema name or the kind header gives 3-6 instructions in a chat.completion', async () => {
  const bySchema = await complete(userRequest('List instructions for this photo.', { response_format: jsonSchemaFormat('instructions') }));
  const byHeader = await complete(userRequest('List instructions for this photo. Return JSON.'), 'instructions');
  for (const completion of [bySchema, byHeader]) {
    InstructionsReply.parse(JSON.parse(contentOf(completion)));
    assert.match(completion.id, /^chatcmpl-sim-[0-9a-f]{16}$/);
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.created, 0);
    assert.equal(completion.model, 'sim-vlm');
    assert.equal(completion.system_fingerprint, 'mmif-simulator');
    assert.equal(firstChoice(completion).finish_reason, 'stop');
    assert.equal(firstChoice(completion).message.role, 'assistant');
  }
});

test('constraints: 4-9 distinct offered keys, concrete sentences for common keys', async () => {
  for (const topic of ['a harbour', 'a market', 'a forest', 'a kitchen', 'a stadium', 'a library']) {
    const completion = await complete(userRequest(constraintsPrompt(OFFERED_LINES, topic), { response_format: jsonSchemaFormat('constraints') }));
    const { constraints } = ConstraintsReply.parse(JSON.parse(contentOf(completion)));
    const types = constraints.map((constraint) => constraint.type);
    assert.ok(types.length >= 4 && types.length <= 9, `4-9 constraints, got ${types.length}`);
    assert.equal(new Set(types).size, types.length, 'no duplicate types');
    for (const { type, value } of constraints) {
      assert.ok(OFFERED_KEYS.includes(type), `${type} was offered`);
      if (type === 'paragraph_number_limit') assert.match(value, /^Your response must consist of exactly [2-4] paragraphs\.$/);
      if (type === 'emoji_usage') assert.equal(value, 'Use exactly one emoji in your response.');
    }
  }
});

test('constraints: with few offered keys all are used, unknown keys take their example (kind header only)', async () => {
  const lines = [OFFERED_LINES[0], OFFERED_LINES[10], OFFERED_LINES[11]].filter((line) => line !== undefined);
  const completion = await complete(userRequest(constraintsPrompt(lines, 'a bridge')), 'constraints');
  const { constraints } = ConstraintsReply.parse(JSON.parse(contentOf(completion)));
  assert.deepEqual(
    constraints.map((constraint) => constraint.type),
    ['paragraph_number_limit', 'emoji_usage', 'table_format'],
  );
  assert.equal(constraints[2]?.value, 'Include a markdown table with two columns.');
});

test('compatibility: every index kept or dropped exactly once; some lists lose one', async () => {
  let lists = 0;
  let withDrop = 0;
  for (const topic of ['light', 'colour', 'people', 'weather', 'water', 'roads', 'trees', 'sky', 'birds', 'cars', 'walls', 'boats']) {
    const completion = await complete(userRequest(compatibilityPrompt(5, topic), { response_format: jsonSchemaFormat('compatibility') }));
    const { keep, dropped } = CompatibilityReply.parse(JSON.parse(contentOf(completion)));
    const all = [...keep, ...dropped.map((item) => item.index)].sort((a, b) => a - b);
    assert.deepEqual(all, [1, 2, 3, 4, 5]);
    assert.ok(dropped.length <= 1);
    lists++;
    if (dropped.length === 1) withDrop++;
  }
  assert.ok(withDrop > 0 && withDrop < lists, `some but not all lists drop one (${withDrop}/${lists})`);
});

test('answer: honours "exactly N paragraphs" and the required prefix (full compliance)', async () => {
  sim.setFaults({ complianceRate: 1 });
  const three = contentOf(
    await complete(
      userRequest(
        answerPrompt('Describe the lighthouse and the stormy weather.', ['Your response must consist of exactly 3 paragraphs.', "Start your answer with 'In this image'"]),
      ),
    ),
  );
  const paragraphs = three.split('\n\n');
  assert.equal(paragraphs.length, 3);
  assert.ok(paragraphs.every((paragraph) => paragraph.trim().length > 20 && !paragraph.includes('\n')));
  assert.ok(three.startsWith('In this image'), three.slice(0, 40));

  const five = contentOf(await complete(userRequest(answerPrompt('Tell a story about the market.', ['Write exactly five paragraphs.']))));
  assert.equal(five.split('\n\n').length, 5);

  const free = contentOf(await complete(userRequest(answerPrompt('Describe the harbour at dawn.', ['Use a calm tone.']))));
  const freeCount = free.split('\n\n').length;
  assert.ok(freeCount >= 2 && freeCount <= 3, `2-3 paragraphs, got ${freeCount}`);
});

test('answer: complianceRate 1 satisfies every recognised constraint at once', async () => {
  sim.setFaults({ complianceRate: 1 });
  for (const [constraint, holds] of await answerVerdicts()) assert.ok(holds, `followed: ${constraint}`);
});

test('answer: complianceRate 0 breaks every recognised constraint', async () => {
  sim.setFaults({ complianceRate: 0 });
  for (const [constraint, holds] of await answerVerdicts()) assert.ok(!holds, `broken: ${constraint}`);
});

test('answer: the default rate follows most constraints but not all', async () => {
  const verdicts = [...(await answerVerdicts()), ...(await answerVerdicts({ seed: 1 })), ...(await answerVerdicts({ seed: 2 }))];
  const followed = verdicts.filter(([, holds]) => holds).length / verdicts.length;
  assert.ok(followed >= 0.8 && followed < 0.98, `followed ${(followed * 100).toFixed(1)}% of ${verdicts.length}`);
});

test('answer: the request seed and the constraint list change the answer', async () => {
  const constraints = STRUCTURE_SET.map(([constraint]) => constraint);
  const request = (seed: number | undefined, list = constraints) => userRequest(answerPrompt('Describe the bridge.', list), seed === undefined ? {} : { seed });
  const [unseeded, seed1, seed1Again, seed2, fewer] = await Promise.all(
    [request(undefined), request(1), request(1), request(2), request(undefined, constraints.slice(0, 4))].map((body) => complete(body)),
  );
  const texts = [unseeded, seed1, seed1Again, seed2, fewer].map((completion) => contentOf(completion as ChatCompletion));
  assert.equal(texts[2], texts[1], 'same seed, same answer');
  assert.equal(new Set([texts[0], texts[1], texts[3], texts[4]]).size, 4, 'seeds and dropped constraints all differ');
});

test('max_tokens cuts the reply with finish_reason length', async () => {
  const completion = await complete(userRequest(answerPrompt('Describe the scene.', []), { max_tokens: 10 }));
  assert.equal(firstChoice(completion).finish_reason, 'length');
  assert.equal(contentOf(completion).length, 40);
  assert.equal(completion.usage?.completion_tokens, 10);
});

// ---------------------------------------------------------------------------------------
// Verification stages

const JUDGED_RESPONSE = 'The harbour wakes slowly under a pale sky.\n\nFishing crews load their nets while gulls circle overhead.';
const JUDGED_CONSTRAINTS = [
  'Your response must consist of exactly 3 paragraphs.', // checkable, broken (2 paragraphs)
  "Mention the word 'harbour' at least once.", // checkable, followed
  'Use a formal tone.', // not checkable: judgeLeniency decides
  "Do not mention the word 'boat'.", // checkable, followed
];

test('direct judge: one score per constraint; checkable ones scored truthfully, others by leniency', async () => {
  for (const [judgeLeniency, unchecked] of [
    [1, 1],
    [0, 0],
  ] as const) {
    sim.setFaults({ judgeLeniency });
    const reply = contentOf(await complete(userRequest(directJudgePrompt(JUDGED_RESPONSE, JUDGED_CONSTRAINTS)), 'direct_judge'));
    assert.match(reply, /Judgement:/);
    assert.deepEqual(
      judgeScores(reply),
      [
        [1, 0],
        [2, 1],
        [3, unchecked],
        [4, 1],
      ],
      reply,
    );
  }
  assert.equal(sim.stats().byStage.direct_judge, 2);
});

test('direct judge: replies are sometimes messy but always parseable', async () => {
  const replies = await Promise.all(
    TOPICS.flatMap((topic) => [topic, `${topic} again`]).map(async (topic) =>
      contentOf(await complete(userRequest(directJudgePrompt(`A note about ${topic}.`, JUDGED_CONSTRAINTS)), 'direct_judge')),
    ),
  );
  for (const reply of replies)
    assert.deepEqual(
      judgeScores(reply).map(([index]) => index),
      [1, 2, 3, 4],
      reply,
    );
  assert.ok(
    replies.some((reply) => /\*\*Summary:\*\*|Constraint_\d+ :/.test(reply)),
    'some formatting noise',
  );
});

test('compare judge: identical responses are False; different ones follow judgeLeniency', async () => {
  const verdict = async (withConstraint: string, withoutConstraint: string) =>
    compareVerdict(contentOf(await complete(userRequest(compareJudgePrompt('Use a formal tone.', withConstraint, withoutConstraint)), 'compare_judge')));
  const answer = 'The harbour wakes slowly.\n\nCrews load their nets.';
  sim.setFaults({ judgeLeniency: 1 });
  assert.equal(await verdict(answer, answer), false);
  assert.equal(await verdict(answer, 'Boats everywhere, lol.'), true);
  sim.setFaults({ judgeLeniency: 0 });
  assert.equal(await verdict(answer, 'Boats everywhere, lol.'), false);
  assert.equal(sim.stats().byStage.compare_judge, 3);
});

test('verifier selection: offered functions with extracted params, [] when none fits, rare hallucinations', async () => {
  const expected: Array<[string, unknown[]]> = [
    ['Your response must consist of exactly 3 paragraphs.', [{ func: 'check_whether_response_paragraph_number_in_range', params: [3, 3] }]],
    ['Your response must be between 60 and 130 words in total.', [{ func: 'check_whether_response_word_count_in_range', params: [60, 130] }]],
    ["Mention the word 'light' at least twice.", [{ func: 'check_whether_keywords_mentioned_in_range', params: [['light'], 2, 10000] }]],
    ["Do not mention the words 'nice' or 'very'.", [{ func: 'check_whether_whole_response_not_contain_certain_substrings', params: [['nice', 'very']] }]],
    ['Use a formal tone.', []],
  ];
  for (const [constraint, calls] of expected) {
    const completion = await complete(userRequest(verifierPrompt(constraint), { response_format: jsonSchemaFormat('verifier_selection') }));
    assert.deepEqual(VerifierSelectionReply.parse(JSON.parse(contentOf(completion))).calls, calls, constraint);
  }
  assert.equal(sim.stats().byStage.verifier_selection, expected.length);

  // In bulk through the pure function (its kind named, no schema): mostly offered names, a few invented ones.
  const replies = Array.from({ length: 200 }, (_, i) =>
    VerifierSelectionReply.parse(
      JSON.parse(
        generateReply(ChatRequestSchema.parse(userRequest(verifierPrompt(`Write exactly ${i + 1} paragraphs.`))), SEED, undefined, undefined, 'verifier_selection').content,
      ),
    ),
  );
  const invented = replies.filter(({ calls }) => calls.some(({ func }) => !VERIFIER_NAMES.includes(func))).length;
  assert.ok(invented > 0 && invented <= 25, `${invented} of ${replies.length} replies name a function that was not offered`);
});

// ---------------------------------------------------------------------------------------
// Determinism and usage

test('determinism: same request gives identical bytes; seed or message changes the reply', async () => {
  const body = JSON.stringify(userRequest(answerPrompt('Describe the old bridge.', ['Use a formal tone.'])));
  const first = await (await postRaw(body)).text();
  const second = await (await postRaw(body)).text();
  assert.equal(second, first);

  const sameSeed = await startSimulator({ seed: SEED });
  const otherSeed = await startSimulator({ seed: SEED + 1 });
  try {
    const post = (url: string) => fetch(`${url}/chat/completions`, { method: 'POST', body }).then((res) => res.json());
    const fromSameSeed = (await post(sameSeed.url)) as ChatCompletion;
    const fromOtherSeed = (await post(otherSeed.url)) as ChatCompletion;
    assert.equal(JSON.stringify(fromSameSeed), first, 'another server with the same seed replies identically');
    const reference = JSON.parse(first) as ChatCompletion;
    assert.notEqual(contentOf(fromOtherSeed), contentOf(reference));
    assert.notEqual(fromOtherSeed.id, reference.id);
    // The server adds nothing on top of the pure reply function.
    const pure = generateReply(ChatRequestSchema.parse(JSON.parse(body)), SEED);
    assert.equal(pure.content, contentOf(reference));
    assert.equal(pure.id, reference.id);
  } finally {
    await Promise.all([sameSeed.close(), otherSeed.close()]);
  }

  const otherMessage = await complete(userRequest(answerPrompt('Describe the new bridge.', ['Use a formal tone.'])));
  assert.notEqual(contentOf(otherMessage), contentOf(JSON.parse(first) as ChatCompletion));
});

test('image_url parts are accepted and charged in prompt tokens', async () => {
  const text = answerPrompt('Describe this photo.', []);
  const textOnly = await complete(userRequest(text));
  const withImage = await complete({
    model: 'sim-vlm',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: IMAGE_URL, detail: 'low' } },
          { type: 'text', text },
        ],
      },
    ],
  });
  assert.equal(withImage.usage?.prompt_tokens, (textOnly.usage?.prompt_tokens ?? 0) + 85);
  const usage = withImage.usage;
  assert.ok(usage);
  assert.equal(usage.completion_tokens, Math.ceil(contentOf(withImage).length / 4));
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
});

// ---------------------------------------------------------------------------------------
// Faults and latency

test('fault 429: Retry-After header and OpenAI-style error body', async () => {
  sim.setFaults({ rate429: 1, retryAfterSeconds: 3 });
  const res = await postRaw(JSON.stringify(userRequest('hello')));
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('retry-after'), '3');
  assert.equal(ErrorBody.parse(await res.json()).error.code, 'rate_limit_exceeded');
  await assert.rejects(complete(userRequest('hello again')), OpenAI.RateLimitError);
});

test('fault 500: OpenAI-style server error', async () => {
  sim.setFaults({ rate500: 1 });
  const res = await postRaw(JSON.stringify(userRequest('hello')));
  assert.equal(res.status, 500);
  assert.equal(ErrorBody.parse(await res.json()).error.type, 'server_error');
  await assert.rejects(complete(userRequest('hello again')), OpenAI.InternalServerError);
});

test('fault hang: clients time out first; otherwise a 504 after hangMs', async () => {
  sim.setFaults({ rateHang: 1, hangMs: 300 });
  await assert.rejects(client.chat.completions.create(userRequest('hello'), { timeout: 100 }), OpenAI.APIConnectionTimeoutError);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(sim.stats().inFlight, 0, 'an abandoned hang is released');

  const started = performance.now();
  const res = await postRaw(JSON.stringify(userRequest('hello')));
  assert.equal(res.status, 504);
  ErrorBody.parse(await res.json());
  assert.ok(performance.now() - started >= 300);
});

test('fault malformed: invalid JSON for JSON stages, empty content for answers', async () => {
  sim.setFaults({ rateMalformed: 1 });
  const json = await complete(userRequest('Anything.', { response_format: jsonSchemaFormat('instructions') }));
  assert.equal(firstChoice(json).finish_reason, 'stop');
  assert.throws(() => JSON.parse(contentOf(json)), SyntaxError);
  assert.ok(contentOf(json).length > 0);
  const answer = await complete(userRequest(answerPrompt('Describe the scene.', [])));
  assert.equal(contentOf(answer), '');
});

test('fault truncated: about half the normal content with finish_reason length', async () => {
  const request = userRequest('Anything.', { response_format: jsonSchemaFormat('instructions') });
  const normal = contentOf(await complete(request));
  sim.setFaults({ rateTruncated: 1 });
  const truncated = await complete(request);
  assert.equal(firstChoice(truncated).finish_reason, 'length');
  assert.equal(contentOf(truncated), normal.slice(0, Math.ceil(normal.length / 2)));
});

test('maxConcurrent: requests beyond the cap get 429 with Retry-After', async () => {
  sim.setFaults({ maxConcurrent: 2, latencyMs: 300 });
  const responses = await Promise.all(Array.from({ length: 5 }, (_, i) => postRaw(JSON.stringify(userRequest(`request ${i}`)))));
  const statuses = responses.map((res) => res.status).sort();
  assert.deepEqual(statuses, [200, 200, 429, 429, 429]);
  for (const res of responses.filter((res) => res.status === 429)) assert.equal(res.headers.get('retry-after'), '1');
  assert.equal(sim.stats().maxInFlight, 2);
});

test('rate limits: x-ratelimit headers on every answer, 429 once a per-minute budget is spent', async () => {
  sim.setFaults({ rateLimitRequests: 3, rateLimitTokens: 100_000 });
  const responses: Response[] = [];
  for (let i = 0; i < 4; i++) responses.push(await postRaw(JSON.stringify(userRequest(`budget ${i}`))));
  assert.deepEqual(
    responses.map((res) => res.status),
    [200, 200, 200, 429],
  );
  assert.deepEqual(
    responses.map((res) => res.headers.get('x-ratelimit-remaining-requests')),
    ['2', '1', '0', '0'],
  );
  for (const res of responses) {
    assert.equal(res.headers.get('x-ratelimit-limit-requests'), '3');
    assert.equal(res.headers.get('x-ratelimit-limit-tokens'), '100000');
    assert.match(res.headers.get('x-ratelimit-reset-requests') ?? '', /^(\d+ms|(\d+m)?\d+(\.\d+)?s)$/);
  }
  assert.equal(responses[3]!.headers.get('retry-after'), '1');

  // A request larger than the token budget is refused whatever the request budget says.
  sim.setFaults({ rateLimitRequests: 0, rateLimitTokens: 10 });
  const big = await postRaw(JSON.stringify(userRequest('far more than ten tokens of prompt text in this request')));
  assert.equal(big.status, 429);
  assert.equal(big.headers.get('x-ratelimit-limit-requests'), null);

  sim.setFaults({ rateLimitTokens: 0 });
  const free = await postRaw(JSON.stringify(userRequest('no limits')));
  assert.equal(free.status, 200);
  assert.equal(free.headers.get('x-ratelimit-limit-tokens'), null);
});

test('a retry of a faulted request can succeed, and the fault sequence is reproducible', async () => {
  sim.setFaults({ rate500: 0.5 });
  const body = JSON.stringify(userRequest('retry me'));
  const attempt = async () => (await postRaw(body)).status;
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) statuses.push(await attempt());
  assert.ok(statuses.includes(500) && statuses.includes(200), statuses.join(','));
  assert.ok(
    statuses.some((status, i) => status === 200 && statuses[i - 1] === 500),
    'a 500 is followed by a 200',
  );

  sim.resetStats(); // also restarts the attempt counters
  const replay: number[] = [];
  for (let i = 0; i < 12; i++) replay.push(await attempt());
  assert.deepEqual(replay, statuses);
});

test('latency is applied to every request', async () => {
  sim.setFaults({ latencyMs: 200, latencyJitterMs: 50 });
  const started = performance.now();
  await complete(userRequest('slow'));
  const elapsed = performance.now() - started;
  assert.ok(elapsed >= 200, `took ${elapsed} ms`);
});

// ---------------------------------------------------------------------------------------
// Stats, admin and bad requests

test('stats count requests, statuses, stages, tokens and concurrency', async () => {
  sim.setFaults({ latencyMs: 150 });
  const completions = await Promise.all([
    complete(userRequest('x', { response_format: jsonSchemaFormat('instructions') })),
    complete(userRequest(constraintsPrompt(OFFERED_LINES, 'a garden')), 'constraints'),
    complete(userRequest(answerPrompt('Describe the garden.', []))),
  ]);
  assert.equal((await postRaw('not json')).status, 400);

  const stats = sim.stats();
  assert.deepEqual(stats, (await (await fetch(adminUrl('stats'))).json()) as unknown);
  assert.equal(stats.requests, 4);
  assert.equal(stats.completed, 3);
  assert.deepEqual(stats.byStatus, { '200': 3, '400': 1 });
  assert.deepEqual(stats.byStage, {
    instructions: 1,
    chat_questions: 0,
    refined_instruction: 0,
    constraints: 1,
    compatibility: 0,
    answer: 1,
    direct_judge: 0,
    compare_judge: 0,
    chat_answer: 0,
    verifier_selection: 0,
    image_tags: 0,
  });
  assert.equal(stats.inFlight, 0);
  assert.equal(stats.maxInFlight, 3);
  const sum = (pick: (usage: NonNullable<ChatCompletion['usage']>) => number) =>
    completions.reduce((total, completion) => total + (completion.usage ? pick(completion.usage) : 0), 0);
  assert.equal(
    stats.promptTokens,
    sum((usage) => usage.prompt_tokens),
  );
  assert.equal(
    stats.completionTokens,
    sum((usage) => usage.completion_tokens),
  );
});

test('/admin/faults merges and validates; /admin/reset zeroes stats but keeps faults', async () => {
  const merged = await fetch(adminUrl('faults'), { method: 'POST', body: JSON.stringify({ rate500: 0.25 }) });
  assert.equal(merged.status, 200);
  assert.deepEqual(await merged.json(), { ...DEFAULT_FAULTS, rate500: 0.25 });
  for (const invalid of [{ rate500: 2 }, { bogus: 1 }]) {
    const res = await fetch(adminUrl('faults'), { method: 'POST', body: JSON.stringify(invalid) });
    assert.equal(res.status, 400);
    ErrorBody.parse(await res.json());
  }

  await complete(userRequest('count me'));
  assert.equal(sim.stats().requests, 1);
  const reset = await fetch(adminUrl('reset'), { method: 'POST' });
  assert.equal(reset.status, 200);
  assert.equal(sim.stats().requests, 0);
  assert.deepEqual(sim.stats().byStatus, {});
  assert.equal(sim.setFaults({}).rate500, 0.25);
});

test('bad requests get 400, unknown routes 404; /v1/models lists models', async () => {
  const cases = [
    'not json',
    JSON.stringify({ ...userRequest('hi'), stream: true }),
    JSON.stringify({ ...userRequest('hi'), n: 2 }),
    JSON.stringify({ model: 'sim-vlm' }),
    JSON.stringify({ model: 'sim-vlm', messages: [{ role: 'user', content: [{ type: 'audio' }] }] }),
  ];
  for (const body of cases) {
    const res = await postRaw(body);
    assert.equal(res.status, 400, body);
    assert.equal(ErrorBody.parse(await res.json()).error.type, 'invalid_request_error');
  }
  const missing = await fetch(`${sim.url}/embeddings`);
  assert.equal(missing.status, 404);
  ErrorBody.parse(await missing.json());

  const models = await client.models.list();
  assert.ok(models.data.length >= 1);
});

test('simulatorOptionsFromEnv reads SIM_* variables and names the bad one', () => {
  assert.deepEqual(
    simulatorOptionsFromEnv({
      SIM_PORT: '8089',
      SIM_SEED: '42',
      SIM_RATE_429: '0.1',
      SIM_MAX_CONCURRENT: '4',
      SIM_RATE_500: '',
      SIM_COMPLIANCE_RATE: '0.75',
      SIM_JUDGE_LENIENCY: '1',
    }),
    { port: 8089, seed: 42, faults: { rate429: 0.1, maxConcurrent: 4, complianceRate: 0.75, judgeLeniency: 1 } },
  );
  assert.deepEqual(simulatorOptionsFromEnv({ SIM_BATCH_COMPLETION_MS: '250', SIM_BATCH_FAILURE_RATE: '0.2', SIM_RATE_LIMIT_TOKENS: '9000' }), {
    faults: { batchCompletionMs: 250, batchFailureRate: 0.2, rateLimitTokens: 9000 },
  });
  assert.deepEqual(
    simulatorOptionsFromEnv({
      SIM_RATE_400: '1',
      SIM_REQUIRED_API_KEY: 'sk-right',
      SIM_KNOWN_MODELS: 'mmif-sim-vlm, mmif-sim-llm',
      SIM_TEXT_ONLY_MODELS: 'mmif-sim-llm',
      SIM_INSUFFICIENT_QUOTA: '1',
    }),
    { faults: { rate400: 1, requiredApiKey: 'sk-right', knownModels: ['mmif-sim-vlm', 'mmif-sim-llm'], textOnlyModels: ['mmif-sim-llm'], insufficientQuota: true } },
  );
  assert.deepEqual(simulatorOptionsFromEnv({}), {});
  assert.throws(() => simulatorOptionsFromEnv({ SIM_RATE_429: '1.5' }), /SIM_RATE_429/);
  assert.throws(() => simulatorOptionsFromEnv({ SIM_PORT: 'eighty' }), /SIM_PORT/);
  assert.throws(() => simulatorOptionsFromEnv({ SIM_LATENCY_MS: '-1' }), /SIM_LATENCY_MS/);
  assert.throws(() => simulatorOptionsFromEnv({ SIM_COMPLIANCE_RATE: '1.2' }), /SIM_COMPLIANCE_RATE/);
});
