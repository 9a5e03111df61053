/**
 * The two LLM judges, independent of who asks them: the builds' verification (verifyAnswer.ts) and
 * `mmif eval` (pipeline/evaluation/) send the same prompts and read the replies the same way. A reply
 * missing what the parser needs is asked once more, in the same conversation; a verdict still missing
 * after that is `undefined` (unparsed), which callers count as not followed.
 */
import type { RenderedPrompt } from '../prompts/chat.js';
import { renderCompareJudgePrompt } from '../prompts/compareJudgePrompt.js';
import { COMPARE_JUDGE_REMINDER, directJudgeReminder } from '../prompts/departures.js';
import { renderDirectJudgePrompt } from '../prompts/directJudgePrompt.js';
import { parseCompareJudge, parseDirectJudge } from '../verification/judgeReplies.js';
import type { SampleImage } from './run/sampleImage.js';

/** Sends one judge prompt (with the image when given) and returns the reply text. */
export type AskJudge = (prompt: RenderedPrompt, image?: SampleImage) => Promise<string>;

/** Asks again once, in the same conversation, when the reply misses what the parser needs. */
function withReminder(prompt: RenderedPrompt, reply: string, reminder: string): RenderedPrompt {
  return { ...prompt, messages: [...prompt.messages, { role: 'assistant', text: reply }, { role: 'user', text: reminder }] };
}

/** The direct judge (Fig. 22, with the image): one score per constraint text, in order. */
export async function directJudgeScores(ask: AskJudge, answer: string, constraints: readonly string[], image?: SampleImage): Promise<Array<boolean | undefined>> {
  const prompt = renderDirectJudgePrompt(answer, constraints);
  const reply = await ask(prompt, image);
  const scores = parseDirectJudge(reply, constraints.length);
  if (scores.every((s) => s !== undefined)) return scores;
  const missing = scores.flatMap((s, i) => (s === undefined ? [`constraint_${i + 1}`] : [])).join(', ');
  const retry = withReminder(prompt, reply, directJudgeReminder(missing));
  const second = parseDirectJudge(await ask(retry, image), constraints.length);
  return scores.map((s, i) => second[i] ?? s);
}

/** The compare judge (Fig. 21): whether `answer` follows `constraint`, judged against an answer made without it. */
export async function compareJudgeVerdict(ask: AskJudge, constraint: string, answer: string, without: string): Promise<boolean | undefined> {
  const prompt = renderCompareJudgePrompt(constraint, answer, without);
  const reply = await ask(prompt);
  const verdict = parseCompareJudge(reply);
  if (verdict !== undefined) return verdict;
  return parseCompareJudge(await ask(withReminder(prompt, reply, COMPARE_JUDGE_REMINDER)));
}
