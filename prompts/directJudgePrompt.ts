/** The direct judge (paper Fig. 22): one call per sample, with the image, scoring every judged constraint. */
import { rendered, type RenderedPrompt } from './chat.js';

/** The tags around the judged response and the constraint list, and each constraint's label (the simulator reads them by these). */
export const DIRECT_JUDGE_MARKERS = {
  responseStart: '<start of response>',
  responseEnd: '<end of response>',
  listStart: '<start of constraint list>',
  listEnd: '<end of constraint list>',
  constraint: 'Constraint_',
} as const;

export function renderDirectJudgePrompt(response: string, constraints: readonly string[]): RenderedPrompt {
  const list = constraints.map((c, i) => `${DIRECT_JUDGE_MARKERS.constraint}${i + 1}: ${c}`).join('\n');
  const text = `Your task is to evaluate whether the response from an AI assistant adheres to all of the given constraints.

Please follow the requirements below to make the judgment:
1. Be strict and consistent in your assessment.
2. You should refer to the content of image to make the judgment.
3. For one constraint, if the response fails to fully meet the constraint, give it a score of 0. Otherwise, give it a score of 1.

${DIRECT_JUDGE_MARKERS.responseStart}
${response}
${DIRECT_JUDGE_MARKERS.responseEnd}

${DIRECT_JUDGE_MARKERS.listStart}
${list}
${DIRECT_JUDGE_MARKERS.listEnd}

You should judge and explain for each constraint in the constraint list without omitting any constraint. Finally, list scores of all the constraints in one sentence.

You should strictly follow the format below:
Judgement: ...
Summary: Score of constraint_1: x/1, Score of constraint_2: x/1, Score of constraint_3: x/1, ..., Score of constraint_n: x/1.`;
  return rendered('direct_judge', [{ role: 'user', text, withImage: true }]);
}
