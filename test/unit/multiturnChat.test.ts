/** Multi-turn chat planning, per-turn verification (PIF) and the turn-level pair rule. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constraintType } from '../../domain/constraints/catalogue.js';
import { removeConflicts } from '../../domain/constraints/compatibility.js';
import { instructionsInForce, type ChatInstruction } from '../../domain/multiturn/chatPlan.js';
import { allGlobalInstructions, planEvalChat, type GlobalInstruction } from '../../pipeline/stages/chat/globalInstructions.js';
import { judgeTurnPair, scoreTurn } from '../../pipeline/stages/chat/turnScore.js';

test("every instruction the planner can give is rule-checkable by its type's catalogue verifiers", () => {
  const all = allGlobalInstructions();
  assert.ok(all.length >= 10);
  for (const i of all) {
    const type = constraintType(i.type)!;
    assert.notEqual(type.verifiers.length, 0, i.type);
    assert.ok(i.verifiers!.length > 0 && i.verifiers!.every((c) => type.verifiers.includes(c.func)), i.value);
  }
});

test('a plan is seeded, has at most maxInstructions on distinct turns, and is compatible across the whole chat', () => {
  const options = { seed: 7, turns: 10, maxInstructions: 6 };
  assert.deepEqual(planEvalChat('img-1', options), planEvalChat('img-1', options));
  const plans = Array.from({ length: 40 }, (_, i) => planEvalChat(`img-${i}`, options));
  assert.ok(
    plans.some((p) => JSON.stringify(p.instructions) !== JSON.stringify(plans[0]!.instructions)),
    'different images get different plans',
  );
  for (const plan of plans) {
    assert.ok(plan.instructions.length >= 1 && plan.instructions.length <= 6);
    const turns = plan.instructions.map((i) => i.turn);
    assert.equal(new Set(turns).size, turns.length);
    assert.deepEqual(
      turns,
      [...turns].sort((a, b) => a - b),
    );
    assert.ok(turns.every((t) => t >= 1 && t <= 10));
    // no instruction conflicts with an earlier one anywhere in the chat
    assert.equal(
      removeConflicts(
        plan.instructions.map((i) => i.constraint),
        'open',
      ).removed.length,
      0,
      JSON.stringify(plan.instructions),
    );
  }
  // two "start every answer with" phrases can never both be given
  for (const plan of plans) assert.ok(plan.instructions.filter((i) => i.constraint.value.includes('start every answer')).length <= 1);
  // a 2-turn chat gets 1 or 2 instructions (seeded count, at most one per turn), both counts occurring
  const twoTurn = Array.from({ length: 40 }, (_, i) => planEvalChat(`x-${i}`, { seed: 1, turns: 2, maxInstructions: 6 }).instructions.length);
  assert.deepEqual([...new Set(twoTurn)].sort(), [1, 2], 'at most one per turn');
  assert.throws(() => planEvalChat('img-9', { seed: 1, turns: 0, maxInstructions: 2 }), /chat img-9: chat plan: turns must be an integer in 1\.\.20, got 0/);
});

const given = (value: string, func: string, params: unknown[], type: string, turn: number): ChatInstruction<GlobalInstruction> => ({
  turn,
  constraint: { type, value, method: 'rule', verifiers: [{ func, params }] },
});

const plan = {
  chatId: 'c1',
  turns: 3,
  instructions: [
    given("mention 'overall'", 'check_whether_each_keyword_in_list_mentioned_in_range', [['overall'], 1, 10000], 'mention', 1),
    given('at most 2 sentences', 'check_whether_response_sentence_number_in_range', [0, 2], 'sentence_number_limit', 3),
  ],
};

test('each answer is verified against every instruction given so far, and its PIF computed', () => {
  assert.equal(instructionsInForce(plan.instructions, 2).length, 1);
  const t2 = scoreTurn('The dog sits on grass. It looks calm.', instructionsInForce(plan.instructions, 2), 'pass');
  assert.deepEqual(
    t2.verdicts.map((v) => v.passed),
    [false],
  );
  assert.equal(t2.pif, 0);
  const t3 = scoreTurn('Overall, the dog sits on grass. It looks calm. The sky is blue.', instructionsInForce(plan.instructions, 3), 'pass');
  assert.deepEqual(
    t3.verdicts.map((v) => v.passed),
    [true, false],
  ); // "Overall" counts (case-insensitive), 3 sentences > 2
  assert.equal(t3.pif, 0.5);
  assert.equal(scoreTurn('Anything.', [], 'pass').pif, 1, 'seed 002 Fig. 5: PIF defaults to 1 before any instruction');
});

test('turn-level pair: kept only when the rejected answer fails the removed instruction and the chosen never loses', () => {
  const at3 = instructionsInForce(plan.instructions, 3);
  const chosen = scoreTurn('Overall, the dog sits on grass. It looks calm.', at3, 'pass'); // passes both
  const forgot = scoreTurn('The dog sits on grass. It looks calm.', at3, 'pass'); // generated without instruction #1: fails it
  assert.deepEqual(judgeTurnPair(chosen, forgot, 0, 'pass'), { kept: true });
  // the rejected answer happens to follow the removed instruction anyway: nothing to teach
  const luckyRejected = scoreTurn('Overall, a dog. Calm.', at3, 'pass');
  const unhelpful = judgeTurnPair(chosen, luckyRejected, 0, 'pass');
  assert.equal(unhelpful.kept, false);
  assert.equal(!unhelpful.kept && unhelpful.rule, 'uninformative-pair');
  // the chosen answer breaks the sentence limit the rejected answer keeps: the pair would teach the opposite
  const longChosen = scoreTurn('Overall, the dog sits. It looks calm. The sky is blue.', at3, 'pass');
  const judged = judgeTurnPair(longChosen, forgot, 0, 'pass');
  assert.equal(!judged.kept && judged.rule, 'chosen-loses');
});
