/**
 * The simulator reads constraints in every template a prompt reaches it in (simulator/answers.ts
 * parseAnswerPrompt): the numbered generation form and the inline form (MM-IFEval's `make_prompt_v2`,
 * the records' default training template, what `mmif eval` sends by default). Measured the way an eval
 * scores it: the simulator's own constraints (its Fig. 15 reply), rule-checked by the phrase parser's
 * calls, answered in each form and verified with the real rule functions.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSTRAINT_TYPES } from '../../domain/constraints/catalogue.js';
import { rngFor, sampleK } from '../../domain/random.js';
import { renderConstraintPrompt } from '../../prompts/constraintPrompt.js';
import { trainingPromptText, type WrittenTemplate } from '../../prompts/trainingPrompt.js';
import { parseAnswerPrompt } from '../../simulator/answers.js';
import { ChatRequestSchema, generateReply } from '../../simulator/replies.js';
import { runVerifierCall } from '../../verification/functions.js';
import { parseVerifierCalls } from '../../verification/selection.js';

const request = (text: string) => ChatRequestSchema.parse({ model: 'sim-vl', messages: [{ role: 'user', content: text }] });

/** The simulator's constraints for a task (its constraint-stage reply), with the parser's rule calls where it has them. */
function constraintsFor(sample: number) {
  const offered = sampleK(rngFor(11, `sample-${sample}`, 'offered'), CONSTRAINT_TYPES, 12);
  const prompt = renderConstraintPrompt('Describe what is happening in the picture.', offered);
  const reply = generateReply(request(prompt.messages.map((m) => m.text).join('\n')), sample, undefined, undefined, prompt.kind);
  const { constraints } = JSON.parse(reply.content) as { constraints: Array<{ type: string; value: string }> };
  return constraints.map((c) => ({ ...c, calls: parseVerifierCalls(c.type, c.value) }));
}

function ruleScore(form: WrittenTemplate, samples: number): { passed: number; total: number } {
  const score = { passed: 0, total: 0 };
  for (let sample = 0; sample < samples; sample++) {
    const constraints = constraintsFor(sample);
    const answer = generateReply(request(trainingPromptText(form, 'Describe what is happening in the picture.', constraints)), sample).content;
    for (const c of constraints.filter((x) => x.calls)) {
      score.total += 1;
      if (
        c.calls!.every((call) => {
          const o = runVerifierCall(answer, call);
          return 'passed' in o && o.passed;
        })
      )
        score.passed += 1;
    }
  }
  return score;
}

test('an inline prompt yields the constraints its numbered twin lists, and the task apart from them', () => {
  for (let sample = 0; sample < 40; sample++) {
    const constraints = constraintsFor(sample);
    const numbered = parseAnswerPrompt(trainingPromptText('numbered', 'Describe what is happening in the picture.', constraints));
    const inline = parseAnswerPrompt(trainingPromptText('inline', 'Describe what is happening in the picture.', constraints));
    assert.equal(inline.instruction.startsWith('Describe what is happening in the picture.'), true, `sample ${sample}: ${inline.instruction}`);
    // Every constraint the simulator understands in the numbered list is read from the prose too.
    const understood = (texts: string[]) => texts.filter((t) => numbered.constraints.includes(t));
    assert.deepEqual(understood(inline.constraints), inline.constraints, `sample ${sample}: nothing but whole constraints`);
    assert.deepEqual(
      inline.constraints,
      numbered.constraints.filter((t) => inline.constraints.includes(t) || parseAnswerPrompt(t).constraints.length > 0),
      `sample ${sample}`,
    );
  }
});

test('rule-checked constraints score alike in the inline and numbered forms (both near the compliance rate)', () => {
  const inline = ruleScore('inline', 600);
  const numbered = ruleScore('numbered', 600);
  const rate = (s: { passed: number; total: number }) => s.passed / s.total;
  console.log(
    `simulator, rule-checked constraints followed: inline ${inline.passed}/${inline.total} (${rate(inline).toFixed(3)}), numbered ${numbered.passed}/${numbered.total} (${rate(numbered).toFixed(3)})`,
  );
  assert.ok(inline.total > 800 && inline.total === numbered.total);
  assert.ok(rate(numbered) > 0.8, `numbered ${rate(numbered)}`);
  assert.ok(Math.abs(rate(inline) - rate(numbered)) < 0.04, `inline ${rate(inline)} vs numbered ${rate(numbered)}`);
});
