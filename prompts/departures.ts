/**
 * Where what the engine sends departs from the paper's prompt figures (Figs. 14, 15, 20, 21, 22), and
 * every message it sends that no figure has: the one list, each entry with its reason. The extra
 * messages' texts are defined here and sent from here (llm/dialect.ts, llm/modelCaller.ts,
 * pipeline/judges.ts, prompts/answerPrompt.ts); docs/data-quality.md's table is generated from this
 * list (`npm run docs:config`), and test/unit/promptDepartures.test.ts holds each figure's rendered
 * text to the paper's text plus exactly the changes listed here.
 */
import { MULTITURN_SYSTEM_TEXT } from './multiturnChat.js';

/** A sentence of a figure the engine changes (`paper` the figure's words) or adds (`paper` null). */
export interface FigureChange {
  figure: 'Fig. 14' | 'Fig. 15' | 'Fig. 20' | 'Fig. 21' | 'Fig. 22';
  paper: string | null;
  /** The engine's words; `{name}` stands for a value filled in per request. */
  engine: string;
  when: string;
  reason: string;
}

/** A message no figure has, sent beside a figure's (or the answer prompt's) message. */
interface ExtraMessage {
  name: string;
  role: 'system' | 'user' | 'assistant' | 'user (text part)';
  /** Its words; `{name}` stands for a value filled in per request. */
  text: string;
  when: string;
  kept: string;
  reason: string;
}

export const JSON_ONLY_TEXT = 'Reply with one JSON object in the format the user gives, and nothing else.';
export const repairText = (error: string): string =>
  `Your reply could not be used (${error}). Reply again with only the complete JSON object in the required format, and nothing else.`;
export const directJudgeReminder = (missing: string): string =>
  `Your reply has no score for ${missing}. Reply again, ending with the line "Summary: Score of constraint_1: x/1, ..." covering every constraint.`;
export const COMPARE_JUDGE_REMINDER = 'Reply again, ending with "Summary: True" or "Summary: False".';
export const referenceFrame = (reference: string): string => `A reference answer to the underlying question, for accuracy (do not mention it): ${reference}`;

export const FIGURE_CHANGES: readonly FigureChange[] = [
  {
    figure: 'Fig. 14',
    paper: null,
    engine: '## Text visible in the image\n{grounding}',
    when: 'the source gives a screen’s visible text (RICO view hierarchies, MultiUI)',
    reason: 'a UI screenshot’s instructions can then name what the screen shows; the paper does not say how its UI instructions were grounded',
  },
  {
    figure: 'Fig. 15',
    paper: 'Your output should follow the format below::',
    engine: 'Your output should follow the format below, using each type at most once:',
    when: 'always',
    reason:
      'the paper keeps each constraint type at most once per sample (a repeat is dropped, domain/constraints/selection.ts); asking for it spends no tokens on constraints that are dropped. The figure’s "::" is a typo',
  },
  {
    figure: 'Fig. 20',
    paper: null,
    engine: 'Use "calls": [] when no function fits. "At least 3" is [3, 10000]; "less than 3" is [0, 2]; a list parameter is one JSON array.',
    when: 'always',
    reason:
      'the figure leaves the output format to a placeholder; these sentences give the reference functions’ conventions for open ranges (their upper bound 10000) and list arguments, without which replies name ranges the functions read differently',
  },
  {
    figure: 'Fig. 21',
    paper: 'Your answer should only include "True" or "False", and no additional text.',
    engine: 'Your answer should be exactly one line, "Summary: True" or "Summary: False", and no additional text.',
    when: 'always',
    reason: 'the reference parser reads the first True/False after the last "Summary" (verification/judgeReplies.ts): a bare "True" as the figure asks has no verdict for it',
  },
];

export const EXTRA_MESSAGES: readonly ExtraMessage[] = [
  {
    name: 'JSON-only instruction',
    role: 'system',
    text: JSON_ONLY_TEXT,
    when: 'a JSON reply is asked of an endpoint that refused `json_schema` (stepped down to `json_object` or to no format, llm/dialect.ts)',
    kept: 'no record',
    reason: 'without a schema the format is asked for in words; OpenAI’s json_object mode refuses messages that never say "JSON"',
  },
  {
    name: 'JSON repair turn',
    role: 'assistant',
    text: '{the unusable reply: whole, or its first 2,048 and last 512 characters}',
    when: 'a JSON reply does not parse or validate (llm/modelCaller.ts), once per try',
    kept: 'the call record (problem, try)',
    reason: 'one repair round trip recovers a malformed reply for less than a new try, which resends the image',
  },
  {
    name: 'JSON repair request',
    role: 'user',
    text: repairText('{why it could not be used}'),
    when: 'after the repair turn above',
    kept: 'the call record (problem, try)',
    reason: 'as above: names the cause so the model can fix it',
  },
  {
    name: 'direct judge reminder',
    role: 'user',
    text: directJudgeReminder('{the constraints without a score}'),
    when: 'a Fig. 22 reply lacks a score for some constraint (pipeline/judges.ts), after that reply as an assistant message',
    kept: 'the call records',
    reason: 'an unparsed verdict counts as not followed; asking once more in the same conversation costs one text-only call',
  },
  {
    name: 'compare judge reminder',
    role: 'user',
    text: COMPARE_JUDGE_REMINDER,
    when: 'a Fig. 21 reply has no verdict after its last "Summary" (pipeline/judges.ts), after that reply',
    kept: 'the call records',
    reason: 'as for the direct judge',
  },
  {
    name: 'reference answer framing',
    role: 'user (text part)',
    text: referenceFrame('{the dataset’s own answer}'),
    when: 'answering a sample whose source has an answer (ChartQA labels, ALLaVA, Geo170K), between the image and the answer prompt (prompts/answerPrompt.ts)',
    kept: 'the answer itself, cleaned, in the record’s `original_answer`; the framing not in the prompt trained on',
    reason: 'the answer model gets the facts of a chart or a geometry problem right; a trained model will not have it, so it is not part of the prompt trained on',
  },
  {
    name: 'multi-turn standing rule',
    role: 'user (text part)',
    text: MULTITURN_SYSTEM_TEXT,
    when: 'every turn of a multi-turn chat (prompts/multiturnChat.ts)',
    kept: 'the chat record’s `system`',
    reason: 'MMMT-IF’s setting: an instruction of any turn binds later answers (no MM-IFEngine figure covers chats)',
  },
];

const cell = (s: string | null): string => (s === null ? '(added)' : s.replace(/\n/g, ' ').replace(/\|/g, '\\|'));

/** docs/data-quality.md's table of the changes and extra messages above. */
export function promptDeparturesMarkdown(): string {
  const figures = [
    '| figure | the paper | the engine | when | why |',
    '|---|---|---|---|---|',
    ...FIGURE_CHANGES.map((c) => `| ${c.figure} | ${cell(c.paper)} | ${cell(c.engine)} | ${cell(c.when)} | ${cell(c.reason)} |`),
  ];
  const messages = [
    '| message | role | text | when | kept in | why |',
    '|---|---|---|---|---|---|',
    ...EXTRA_MESSAGES.map((m) => `| ${m.name} | ${m.role} | ${cell(m.text)} | ${cell(m.when)} | ${cell(m.kept)} | ${cell(m.reason)} |`),
  ];
  return [...figures, '', ...messages].join('\n');
}
