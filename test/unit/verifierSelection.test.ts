import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseVerifierCalls } from '../../verification/selection.js';
import { runVerifierCall } from '../../verification/functions.js';

const cases: Array<[string, string, unknown]> = [
  ['paragraph_number_limit', 'Your response must consist of exactly 3 paragraphs.', [{ func: 'check_whether_response_paragraph_number_in_range', params: [3, 3] }]],
  ['paragraph_number_limit', 'Write at least two paragraphs.', [{ func: 'check_whether_response_paragraph_number_in_range', params: [2, 10000] }]],
  ['sentence_number_limit', 'Each paragraph should contain between 3 and 5 sentences.', [{ func: 'check_whether_each_paragraph_sentence_number_in_range', params: [3, 5] }]],
  ['sentence_number_limit', 'Totally use 5 sentences in your response.', [{ func: 'check_whether_response_sentence_number_in_range', params: [5, 5] }]],
  ['sentence_number_limit', 'Use fewer than 4 sentences.', [{ func: 'check_whether_response_sentence_number_in_range', params: [0, 3] }]],
  ['word_count_range_limit', 'Please write between 150 and 200 words in total.', [{ func: 'check_whether_response_word_count_in_range', params: [150, 200] }]],
  ['word_count_range_limit', 'Keep it to no more than 80 words.', [{ func: 'check_whether_response_word_count_in_range', params: [0, 80] }]],
  [
    'mention',
    "Mention the term 'sorry' at least twice throughout your description.",
    [{ func: 'check_whether_each_keyword_in_list_mentioned_in_range', params: [['sorry'], 2, 10000] }],
  ],
  ['mention', "Mention 'GreenTech' exactly three times throughout.", [{ func: 'check_whether_each_keyword_in_list_mentioned_in_range', params: [['GreenTech'], 3, 3] }]],
  [
    'multiple_mention',
    "Mention both 'oven' and 'baking' at least once in your response.",
    [{ func: 'check_whether_each_keyword_in_list_mentioned_in_range', params: [['oven', 'baking'], 1, 10000] }],
  ],
  [
    'not_mention',
    "Please do not mention the words 'formula' or 'equation' in your answer.",
    [{ func: 'check_whether_whole_response_not_contain_certain_substrings', params: [['formula', 'equation']] }],
  ],
  [
    'prefix_and_suffix',
    "Start the poem with 'In the heart of the city...' and end with '...the city never sleeps.'",
    [
      { func: 'check_whether_whole_response_begin_with_certain_substring', params: ['In the heart of the city...'] },
      { func: 'check_whether_whole_response_end_with_certain_substring', params: ['...the city never sleeps.'] },
    ],
  ],
  ['precision', 'Keep two decimal places for all numbers in the answer.', [{ func: 'check_number_precision_in_response', params: [2] }]],
  ['precision', "Don't include specific numbers in your answers.", [{ func: 'check_whether_has_no_arabic_number_in_response', params: [] }]],
];

test('common phrasings map to reference verifier calls with reference conventions', () => {
  for (const [type, value, expected] of cases) {
    assert.deepEqual(parseVerifierCalls(type, value), expected, `${type}: ${value}`);
  }
});

test('every parsed call is accepted by the verifier registry', () => {
  for (const [type, value] of cases) {
    for (const call of parseVerifierCalls(type, value)!) assert.ok('passed' in runVerifierCall('x', call), `${call.func} ${JSON.stringify(call.params)}`);
  }
});

test('unrecognised phrasings and judged types are left to the fallback', () => {
  assert.equal(parseVerifierCalls('paragraph_number_limit', 'Each paragraph should focus on one idea.'), undefined);
  assert.equal(parseVerifierCalls('word_count_range_limit', 'Your response must be a single word or phrase.'), undefined);
  assert.equal(parseVerifierCalls('prefix_and_suffix', 'Begin every sentence with an exclamation mark.'), undefined);
  assert.equal(parseVerifierCalls('tone_requirement', 'Write in a positive tone.'), undefined);
  assert.equal(parseVerifierCalls('mention', 'Mention the weather.'), undefined);
});
