/**
 * One multi-turn chat generated against the real simulator over HTTP (pipeline/stages/chat/chatStage.ts):
 * every turn verified against every instruction in force, PIF recorded, turns below the threshold
 * regenerated or the chat rejected, turn-level pairs kept only under the pair rules, and a re-run
 * served from the model cache.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import { SampleRejection } from '../../domain/rejection.js';
import type { SourceSample } from '../../domain/sample.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { runChatStage } from '../../pipeline/stages/chat/chatStage.js';
import { scoreTurn } from '../../pipeline/stages/chat/turnScore.js';
import type { PlannedConstraint } from '../../pipeline/run/stageState.js';
import { rule } from '../harness/plannedConstraints.js';
import { simulatorScene } from '../harness/simulatorScene.js';

const scene = simulatorScene({ seed: 11, tmpPrefix: 'mmif-chat-', scene: 2 });

function context(output: string, overrides: Partial<BuildConfigInput> = {}) {
  return scene.context('chat', { verification: { maxRegenerations: 10 }, ...overrides }, output);
}

const sample: SourceSample = { sampleId: 'cc3m-chat-7', source: 'cc3m', sourceId: 'c', licenseNote: '', image: { sourceIndex: 0, locator: { path: 'x' } } };
const CANDIDATES: PlannedConstraint[] = [
  rule('paragraph_number_limit', 'From now on, answer in exactly 2 paragraphs.', 'check_whether_response_paragraph_number_in_range', [2, 2]),
  { type: 'tone_requirement', value: 'Sound cheerful.', method: 'compare_judge', verifiers: [], selection: 'none' },
  rule('mention', 'From now on, mention the word "harbor" at least once.', 'check_whether_each_keyword_in_list_mentioned_in_range', [['harbor'], 1, 10000]),
  rule('not_mention', 'From now on, never write "harbor".', 'check_whether_whole_response_not_contain_certain_substrings', [['harbor']]),
  rule('word_count_range_limit', 'From now on, use at most 120 words.', 'check_whether_response_word_count_in_range', [1, 120]),
];
const QUESTIONS = Array.from({ length: 8 }, (_, i) => `Question ${i + 1}: what detail of the scene stands out?`);

test('a chat: every turn verified on every instruction in force, PIF 1 at the threshold, pairs under the rules, cached re-run', async () => {
  scene.sim.setFaults({ complianceRate: 0.9, judgeLeniency: 1 });
  const output = path.join(scene.dir, 'out-chat');
  const calls: CallRecord[] = [];
  const chat = await runChatStage(context(output), sample, scene.image, QUESTIONS, CANDIDATES, { maxInstructions: 3, pifThreshold: 1 }, calls);

  // This sample's seeded plan (seed 002 §1: the first question always gets one, then 1 − given/max;
  // candidates in a seeded order): 3 instructions, at turns 1, 2 and 3.
  assert.deepEqual(
    chat.instructions.map((x) => [x.turn, x.constraint.type]),
    [
      [1, 'mention'],
      [2, 'paragraph_number_limit'],
      [3, 'word_count_range_limit'],
    ],
  );
  assert.deepEqual(
    chat.removed.map((r) => r.type),
    ['tone_requirement', 'not_mention'],
    'judged and conflicting candidates are refused, with reasons',
  );
  assert.equal(chat.turns.length, 8);
  const first = chat.instructions[0]!.turn;
  let keptPairs = 0;
  for (const turn of chat.turns) {
    const inForce = chat.instructions.filter((x) => x.turn <= turn.turn);
    // The recorded verdicts are the verifiers' verdicts on the recorded answer.
    assert.deepEqual(scoreTurn(turn.answer, inForce, 'fail'), { verdicts: turn.verdicts, pif: turn.pif });
    assert.equal(turn.verdicts.length, inForce.length);
    assert.equal(turn.pif, turn.turn < first ? null : 1, `turn ${turn.turn}`);
    assert.equal(turn.instruction, chat.instructions.find((x) => x.turn === turn.turn)?.constraint.value);
    if (!turn.pair) {
      assert.ok(!inForce.some((x) => x.turn < turn.turn), `turn ${turn.turn} has an earlier instruction but no pair`);
      continue;
    }
    assert.ok(turn.pair.forgottenTurn < turn.turn);
    const stake = inForce.findIndex((x) => x.turn === turn.pair!.forgottenTurn);
    if (turn.pair.judgement.kept) {
      keptPairs++;
      assert.equal(turn.pair.rejectedVerdicts[stake]?.passed, false, 'a kept pair really fails the forgotten instruction');
    } else {
      assert.equal(turn.pair.rejectedVerdicts[stake]?.passed, true, 'the chosen answer passes everything, so only uninformative-pair can refuse');
      assert.equal(turn.pair.judgement.rule, 'uninformative-pair');
    }
  }
  assert.ok(keptPairs > 0, 'some turn-level pairs are kept');
  assert.ok(calls.every((c) => c.simulated && !c.cached));

  const again: CallRecord[] = [];
  assert.deepEqual(await runChatStage(context(output), sample, scene.image, QUESTIONS, CANDIDATES, { maxInstructions: 3, pifThreshold: 1 }, again), chat);
  assert.equal(again.length, calls.length);
  assert.ok(
    again.every((c) => c.cached),
    'a re-run pays for nothing',
  );
});

test('a turn that never reaches the threshold rejects the chat, naming the turn and the failed instruction', async () => {
  scene.sim.setFaults({ complianceRate: 0, judgeLeniency: 1 });
  const ctx = context(path.join(scene.dir, 'out-failing'), { verification: { maxRegenerations: 1 } });
  await assert.rejects(runChatStage(ctx, sample, scene.image, QUESTIONS, CANDIDATES, { maxInstructions: 3, pifThreshold: 1 }, []), (err: unknown) => {
    assert.ok(err instanceof SampleRejection);
    assert.match(err.reason, /^chat: below-threshold: turn \d PIF 0\.\d\d < 1 after 2 answers; failed: #1 \w+/);
    return true;
  });
});
