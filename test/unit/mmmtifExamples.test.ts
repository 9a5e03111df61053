/**
 * The MMMT-IF worked examples (seed 002, appendix Tables 7-11) checked with our verifiers, where
 * MMMT-IF's instructions and ours mean the same thing: sentence counts, sentence begin/end, keyword
 * mentions, and words per sentence (MMMT-IF splits on whitespace; the reference word count also drops
 * punctuation-only tokens, which never changes a verdict below). Each test names the instructions the
 * paper counts as followed, so its PIF can be read off; texts are copied verbatim. Used: Table 7 turn
 * 15, Table 8, Table 9 rows 1, 2, 3 and 5, Table 10. Left out: the even/odd number instructions (no
 * reference verifier checks parity: Table 7 turn 1, Table 11) and Table 9 row 4 (its response is
 * elided mid-text); "each sentence at most/at least 18 words" is checked with the shared text helpers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runVerifierCall } from '../../verification/functions.js';
import { pySplit, sentences, words } from '../../verification/text.js';

function passes(response: string, func: string, params: unknown[]): boolean {
  const outcome = runVerifierCall(response, { func, params });
  if ('error' in outcome) throw new Error(outcome.error);
  return outcome.passed;
}

const atMostSentences = (t: string, n: number) => passes(t, 'check_whether_response_sentence_number_in_range', [0, n]);
const atLeastSentences = (t: string, n: number) => passes(t, 'check_whether_response_sentence_number_in_range', [n, 10000]);
const everySentenceStarts = (t: string, s: string) => passes(t, 'check_whether_each_sentence_begin_with_certain_substring', [s]);
const everySentenceEnds = (t: string, s: string) => passes(t, 'check_whether_each_sentence_end_with_certain_substring', [s]);
const usesWord = (t: string, w: string) => passes(t, 'check_whether_each_keyword_in_list_mentioned_in_range', [[w], 1, 10000]);
const wordsPerSentence = (t: string) => sentences(t).map((s) => words(s).length);

test('Table 7, turn 15 (Gemini, PIF 3/6)', () => {
  const response =
    "Stage props can enhance the narrative or symbolism of a performance. Simple props, like the bamboo poles in Image 1, become integral to the dance itself. Conversely, the absence of props in Image 2 might emphasize the dancers' movements and stage presence. Such choices reflect deliberate artistic decisions in conveying a performance's message.";
  assert.equal(everySentenceEnds(response, '!'), false);
  assert.equal(usesWord(response, 'itself'), true); // followed
  assert.ok(wordsPerSentence(response).every((n) => n <= 18)); // followed: at most 18 words
  assert.equal(atMostSentences(response, 4), true); // followed
  assert.equal(everySentenceStarts(response, 'S'), false);
  // the sixth instruction (an even number bigger than 5) is not followed and not checkable here: 3/6
});

test('Table 8, the lowest-scoring human answer (PIF 2/5)', () => {
  const response =
    "Both food items in Image1 and Image2 convey different storylines and sentiments within their culinary cultures! Being round and sweet, doughnuts, as depicted in Image1, often symbolize indulgence and reward! Because of their round shape, they can also denote eternity and completeness! By comparison, spaghetti and tomato sauce shown in picture 2, hold deep-rooted symbolism in Italian culture! Being central to many meals, spaghetti symbolizes unity and family cohesion for more than 6 centuries! By making pasta from scratch or preparing a family recipe the second dish speaks to continuity and heritage! The tomato sauce signifies prosperity and abundance, often representative of the lush Italian gardens and the healthy Mediterranean diet! Beyond its flavor, tomato sauce symbolizes prosperity, reflecting Italy's lush gardens, as well as a healthy Mediterranean diet! Both pasta and tomato sauce embody Italy's identity and cultural pride with connection to land, tradition, and family!";
  // "sentence 7 is both longer than 18 words and starts with the letter T"
  assert.deepEqual(wordsPerSentence(response), [16, 14, 12, 16, 16, 18, 19, 18, 18]);
  assert.ok(sentences(response)[6]!.startsWith('The tomato sauce'));
  assert.equal(everySentenceStarts(response, 'B'), false);
  assert.equal(usesWord(response, 'like'), false); // "the word 'like' is not in the response"
  assert.equal(everySentenceEnds(response, '!'), true); // followed (the even number "6" is the other)
});

test('Table 9, rows 1-3 and 5 (Gemini repeating its answer)', () => {
  const s1 = 'Swamps are the typical environment in image 1.';
  const s2 = 'Spatially, they appear to be clustered together in dense stands.';
  const s3 =
    'Serving a multitude of purposes, the leaves of the cattail plant have been ingeniously incorporated into diverse aspects of life in various cultures throughout history.';
  const s4 =
    'Specifically, the leaves are recognized for their strength and pliability, making them ideal for weaving into mats, baskets, and even temporary shelters, providing both comfort and protection from the elements.';
  const s5 = 'The Cattleya orchids in Image 2 showcase a captivating blend of pink and purple hues, accented by a vibrant yellow center.';
  assert.equal(everySentenceStarts(s1, 'S'), true); // row 1: 1/1
  assert.equal(everySentenceStarts(`${s1} ${s2}`, 'S'), true); // row 2: 1/1
  const row3 = `${s1} ${s2} ${s3} ${s4}`; // row 3: 1/2
  assert.equal(everySentenceStarts(row3, 'S'), true);
  assert.deepEqual(wordsPerSentence(row3), [8, 10, 25, 30]); // "at least 18 words" fails on the first two
  const row5 = `${row3} ${s5} [...]`; // row 5: 0/4
  assert.equal(everySentenceStarts(row5, 'S'), false);
  assert.equal(atMostSentences(row5, 4), false);
  assert.ok(wordsPerSentence(row5).some((n) => n < 18));
});

test('Table 10, Gemini declining a solvable task (PIF 0/6)', () => {
  const response =
    'Sorry, but I cannot fulfill this request. Combining the existing instructions \u2013 to end every sentence with a question mark and to begin every sentence with the letter "S" \u2013 creates an impossible grammatical structure for a coherent response.';
  const [, second] = sentences(response);
  // MMMT-IF counts the two en-dashes as words, the reference word count drops them: > 18 either way
  assert.equal(pySplit(second!).length, 32);
  assert.deepEqual(wordsPerSentence(response), [7, 30]);
  assert.equal(atLeastSentences(response, 5), false);
  assert.equal(usesWord(response, 'per se'), false);
  assert.equal(everySentenceEnds(response, '?'), false);
  assert.equal(everySentenceStarts(response, 'S'), false); // "Sorry" does, "Combining" does not
});
