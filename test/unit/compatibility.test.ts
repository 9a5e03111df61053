import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSTRAINT_TYPES, typesConflict } from '../../domain/constraints/catalogue.js';
import { classifyInstruction, removeConflicts, type CheckedConstraint } from '../../domain/constraints/compatibility.js';

test('instructions are classified coarsely by what they can carry', () => {
  assert.equal(classifyInstruction('What color is the truck?'), 'short_answer');
  assert.equal(classifyInstruction('Is there a dog in the picture?'), 'short_answer');
  assert.equal(classifyInstruction('Answer in one word: what is shown?'), 'short_answer');
  assert.equal(classifyInstruction('Write a short, upbeat caption for this photo.'), 'short_text');
  assert.equal(classifyInstruction('Provide a detailed analysis of the image, including the setting.'), 'open');
});

test('declared type conflicts are symmetric and refer to real types', () => {
  const keys = new Set(CONSTRAINT_TYPES.map((t) => t.key));
  for (const t of CONSTRAINT_TYPES) {
    for (const other of t.conflictsWith) {
      assert.ok(keys.has(other), `${t.key} names unknown ${other}`);
      assert.ok(typesConflict(other, t.key) && typesConflict(t.key, other));
    }
  }
  assert.equal(typesConflict('tone_requirement', 'mention'), false);
});

const c = (type: string, value: string, verifiers?: CheckedConstraint['verifiers']): CheckedConstraint => ({ type, value, verifiers });

test('paragraph counts on a yes/no question are removed as unsuitable', () => {
  const { kept, removed } = removeConflicts([c('paragraph_number_limit', 'Use 3 paragraphs.'), c('tone_requirement', 'Be warm.')], 'short_answer');
  assert.deepEqual(
    kept.map((k) => k.type),
    ['tone_requirement'],
  );
  assert.match(removed[0]!.reason, /^unsuitable: paragraph_number_limit does not fit a short answer instruction/);
});

test('a word range cannot be asked of a one-word answer', () => {
  const { removed } = removeConflicts([c('word_count_range_limit', 'Write 100-150 words.')], classifyInstruction('Answer in one word: what animal is this?'));
  assert.equal(removed.length, 1);
});

test('value-level conflicts between verifier calls: the later constraint gives way', () => {
  const para = (lo: number, hi: number) => [{ func: 'check_whether_response_paragraph_number_in_range', params: [lo, hi] }];
  const cases: Array<[CheckedConstraint, CheckedConstraint, RegExp]> = [
    [c('paragraph_number_limit', 'exactly 3', para(3, 3)), c('wrap_up_requirement', 'at least 5', para(5, 10000)), /ranges \[3, 3\] and \[5, 10000\]/],
    [
      c('precision', 'two decimals', [{ func: 'check_number_precision_in_response', params: [2] }]),
      c('scientific_notation', 'no numbers', [{ func: 'check_whether_has_no_arabic_number_in_response', params: [] }]),
      /precision and "no numbers"/,
    ],
    [
      c('mention', "mention 'apple' twice", [{ func: 'check_whether_each_keyword_in_list_mentioned_in_range', params: [['apple'], 2, 10000] }]),
      c('not_mention', "don't say 'Apple'", [{ func: 'check_whether_whole_response_not_contain_certain_substrings', params: [['Apple']] }]),
      /'apple' is both required and forbidden/,
    ],
    [
      c('prefix_and_suffix', "start with 'Hi'", [{ func: 'check_whether_whole_response_begin_with_certain_substring', params: ['Hi'] }]),
      c('first_letter_requirements', "start with 'Once'", [{ func: 'check_whether_whole_response_begin_with_certain_substring', params: ['Once'] }]),
      /cannot begin with both 'Hi' and 'Once'/,
    ],
  ];
  for (const [first, second, reason] of cases) {
    const { kept, removed } = removeConflicts([first, second], 'open');
    assert.deepEqual(kept, [first]);
    assert.match(removed[0]!.reason, reason);
  }
  const compatible = removeConflicts(
    [c('paragraph_number_limit', '3', para(3, 3)), c('x_first', 'at least 2', para(2, 10000))].map((x) => ({ ...x, type: 'paragraph_number_limit' })),
    'open',
  );
  assert.equal(compatible.kept.length, 2, 'overlapping ranges are compatible');
});

test('declared type conflicts remove the later constraint', () => {
  const { kept, removed } = removeConflicts([c('strict_formatting_requirements', 'Return JSON.'), c('paragraph_number_limit', 'Use 3 paragraphs.')], 'open');
  assert.deepEqual(
    kept.map((k) => k.type),
    ['strict_formatting_requirements'],
  );
  assert.match(removed[0]!.reason, /conflicts with strict_formatting_requirements/);
});
