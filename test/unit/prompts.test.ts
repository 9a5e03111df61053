import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSTRAINT_TYPES } from '../../domain/constraints/catalogue.js';
import { answerPromptText, renderAnswerPrompt } from '../../prompts/answerPrompt.js';
import { chatMessages, jsonSchemaOf } from '../../llm/chatMessages.js';
import { renderCompatibilityPrompt } from '../../prompts/compatibilityPrompt.js';
import { constraintReplySchema, renderConstraintPrompt } from '../../prompts/constraintPrompt.js';
import { renderInstructionPrompt } from '../../prompts/instructionPrompt.js';

test('the answer prompt is the reference format, with a numbered constraint list', () => {
  const text = answerPromptText('Describe the scene.', [
    { type: 'paragraph_number_limit', value: 'Use exactly 2 paragraphs.' },
    { type: 'mention', value: "Mention 'sun' twice." },
  ]);
  assert.equal(
    text,
    "## Task Description\nDescribe the scene.\n\n## Constraints\nYou must strictly follow the constraints below:\n1. Use exactly 2 paragraphs.\n2. Mention 'sun' twice.",
  );
  assert.equal(answerPromptText('Describe the scene.', []), '## Task Description\nDescribe the scene.');
  // The authors' make_prompt (SYuan03/MM-IFEngine data_gen/utils/tools.py), given the constraint texts
  // as strings, returns this for the same input: our text is it without the template's closing "\n\n"
  // (the same text is the numbered training prompt); a constraint given as a dict there reads
  // "1. <key>: <value>", which would put a type key in front of the model; with no constraint
  // make_prompt keeps an empty "## Constraints" header, which ours leaves out (docs/outputs.md).
  const makePromptOfStrings =
    "## Task Description\nDescribe the scene.\n\n## Constraints\nYou must strictly follow the constraints below:\n1. Use exactly 2 paragraphs.\n2. Mention 'sun' twice.\n\n";
  assert.equal(`${text}\n\n`, makePromptOfStrings);
  const rendered = renderAnswerPrompt('Describe the scene.', []);
  assert.equal(rendered.messages.length, 1);
  assert.equal(rendered.messages[0]!.withImage, true);
});

test('a reference answer frames the answer prompt: after the image, before the task', () => {
  const constraints = [{ type: 'length', value: 'Use exactly 2 paragraphs.' }];
  const frame = 'A reference answer to the underlying question, for accuracy (do not mention it): 42';
  const task = answerPromptText('How many birds?', constraints);
  const framedPrompt = renderAnswerPrompt('How many birds?', constraints, '42');
  assert.deepEqual(framedPrompt.messages, [{ role: 'user', text: task, withImage: true, preface: frame }]);
  // Sent: the image first, then the reference, then the task; the rejected answer (fewer constraints) shares all but the dropped ones.
  const image = { jpeg: Buffer.from('jpeg'), sha256: 'x' };
  const parts = (prompt: typeof framedPrompt) => (chatMessages(prompt, image, 'low')[0]!.content as Array<{ type: string; text?: string }>).map((p) => p.text ?? p.type);
  assert.deepEqual(parts(framedPrompt), ['image_url', frame, task]);
  assert.deepEqual(parts(renderAnswerPrompt('How many birds?', [], '42')).slice(0, 2), ['image_url', frame]);
  // Without the image (the no_image rejected answer), the reference still goes first, as its own text part.
  assert.deepEqual(chatMessages(framedPrompt, undefined, 'low'), [
    {
      role: 'user',
      content: [
        { type: 'text', text: frame },
        { type: 'text', text: task },
      ],
    },
  ]);
});

test('the instruction prompt (Fig. 14) lists the sampled examples and the JSON output format', () => {
  const p = renderInstructionPrompt(['Explain the activity.', 'Write a poem.']);
  const text = p.messages[0]!.text;
  assert.match(text, /^You are an expert in generating concise instructions for images\./);
  assert.match(text, /1\. Explain the activity\.\n2\. Write a poem\./);
  assert.match(text, /\{"instructions": \[/);
  assert.equal(p.messages[0]!.withImage, true);
});

test('the constraint prompt (Fig. 15) embeds the instruction and one line per offered type', () => {
  const offered = CONSTRAINT_TYPES.slice(16, 19);
  const text = renderConstraintPrompt('Describe the chart.', offered).messages[0]!.text;
  assert.match(text, /## Original Instruction\nDescribe the chart\./);
  assert.match(text, /- paragraph_number_limit \(C\.1 Paragraph limit\): .* Example: "Your response must consist of exactly 4 paragraphs\."/);
  assert.equal(text.match(/^- [a-z_]+ \(/gm)!.length, 3);
  assert.match(text, /Do not conflict with the original instruction or with each other/);
});

test('the constraint reply schema sent names the offered types as an enum and allows exactly min-max (3-12) constraints; the reply is parsed as free strings', () => {
  const offered = ['length', 'keyword', 'tone'];
  const listSchema = (keys = offered) => (jsonSchemaOf(constraintReplySchema(keys, { min: 3, max: 12 })) as { properties: { constraints: unknown } }).properties.constraints;
  const free = {
    type: 'array',
    items: { type: 'object', properties: { type: { type: 'string' }, value: { type: 'string' } }, required: ['type', 'value'], additionalProperties: false },
  };
  assert.deepEqual(listSchema(), {
    ...free,
    minItems: 3,
    maxItems: 12,
    items: { ...free.items, properties: { type: { type: 'string', enum: offered }, value: { type: 'string', minLength: 1 } } },
  });
  // A server that does not enforce the schema may still send another type, an empty value, a short
  // list: parsed, for the stage to drop or refuse, not the whole reply refused as unusable.
  const reply = {
    constraints: [
      { type: 'length', value: 'Use 2 paragraphs.' },
      { type: 'rhyme', value: '' },
    ],
  };
  assert.deepEqual(constraintReplySchema(offered, { min: 3, max: 12 }).parse(reply), reply);
  // Nothing offered: no enum (llama.cpp refuses an empty one); the stage refuses the sample.
  assert.deepEqual(listSchema([]), {
    ...free,
    minItems: 3,
    maxItems: 12,
    items: { ...free.items, properties: { ...free.items.properties, value: { type: 'string', minLength: 1 } } },
  });
});

test('the compatibility prompt numbers the constraints with their types', () => {
  const text = renderCompatibilityPrompt('Q?', [
    { type: 'mention', value: 'A' },
    { type: 'not_mention', value: 'B' },
  ]).messages[0]!.text;
  assert.match(text, /1\. \[mention\] A\n2\. \[not_mention\] B/);
});

test('prompt versions differ per template (they are part of the cache key)', () => {
  const versions = [
    renderInstructionPrompt(['x']).version,
    renderConstraintPrompt('x', []).version,
    renderCompatibilityPrompt('x', []).version,
    renderAnswerPrompt('x', []).version,
  ];
  assert.equal(new Set(versions).size, 4);
});

test('the compare judge prompt (Fig. 21) asks for one reply format: the single line the parser reads', async () => {
  const { renderCompareJudgePrompt } = await import('../../prompts/compareJudgePrompt.js');
  const { PROMPT_VERSIONS } = await import('../../domain/promptKinds.js');
  const { parseCompareJudge } = await import('../../verification/judgeReplies.js');
  const p = renderCompareJudgePrompt('Use a formal tone.', 'Dear reader, ...', 'Hey, ...');
  const text = p.messages[0]!.text;
  const format = text.slice(text.indexOf('**Response Format**'));
  // Fig. 21's meaning: the verdict alone, no extra text; the parser's need: after "Summary".
  assert.match(format, /exactly one line, "Summary: True" or "Summary: False", and no additional text\.$/);
  assert.equal((format.match(/Summary:/g) ?? []).length, 2, 'one instruction naming both verdict lines, no second format');
  assert.doesNotMatch(text, /should only include "True" or "False"/, 'no bare-word instruction contradicting the Summary line');
  // The two replies the instruction allows are exactly what the parser reads.
  assert.equal(parseCompareJudge('Summary: True'), true);
  assert.equal(parseCompareJudge('Summary: False'), false);
  assert.notEqual(PROMPT_VERSIONS.compare_judge, 'fig21-v1', 'a wording change must change every cache key');
});
