import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FUNCTIONS, resolveFunction, runVerifierCall, type VerifierOutcome } from '../../verification/functions.js';
import { cleanText, keywordCounts, paragraphs, pyStrip, words } from '../../verification/text.js';

/** [response, params, expected verdict] */
type Golden = [string, unknown[], boolean];

/**
 * Golden verdicts of the reference functions. Every row was also run through the Python reference
 * (`function_and_compare.py` with nltk 3.10.4 and the English punkt_tab), which gave the same verdict.
 */
const REFERENCE: Record<string, Golden[]> = {
  check_whether_response_paragraph_number_in_range: [
    ['A\nB', [1, 1], true], // a single newline does not separate paragraphs
    ['A\n\nB', [2, 2], true],
    ['# Title\n\nBody text here.', [2, 2], true], // a heading and a blank line make a paragraph
    ['A\n   \t\nB', [2, 2], true], // a whitespace-only line is blank once lines are stripped
    ['\n\n  A  \n\n\n\nB\n\n', [2, 2], true],
    ['A\r\n\r\nB', [2, 2], true],
    ['A\u2028\u2028B', [2, 2], true], // str.splitlines breaks at U+2028 too
    ['A\n\u3000\nB', [2, 2], true], // U+3000 is Python whitespace
    ['', [0, 0], true],
    ['A\n\nB\n\nC', [3, 10000], true], // "at least 3"
    ['A\n\nB', [3, 10000], false],
  ],
  check_whether_response_sentence_number_in_range: [
    ['Hello world. This is a test.', [2, 2], true],
    ['Dr. Smith arrived. He sat down.', [2, 2], true], // Punkt knows "dr." is an abbreviation
    ['Title\nFirst sentence. Second one.', [2, 2], true], // Punkt does not split at a newline
    ['Really? Yes! Fine.', [3, 3], true],
    ['', [0, 0], true],
    ['One. Two. Three. Four.', [0, 3], false], // "less than 4" is [0, 3]
  ],
  check_whether_each_paragraph_sentence_number_in_range: [
    ['One. Two.\n\nThree.', [1, 2], true],
    ['One. Two.\n\nThree.', [2, 2], false],
  ],
  check_whether_each_paragraph_sentence_number_in_range_list: [
    [
      'One. Two.\n\nThree.',
      [
        [
          [2, 2],
          [1, 1],
        ],
      ],
      true,
    ],
    [
      'One. Two.\n\nThree.',
      [
        [
          [1, 1],
          [2, 2],
        ],
      ],
      false,
    ],
    ['One. Two.\n\nThree.', [[[2, 2]]], false], // one range per paragraph, no more, no less
    [
      'One. Two.\n\nThree.',
      [
        [
          [2, 2],
          [1, 1],
          [0, 5],
        ],
      ],
      false,
    ],
  ],
  check_whether_response_word_count_in_range: [
    ["don't stop", [2, 2], true], // the apostrophe is deleted: "dont" is one word
    ['well \u2014 maybe', [2, 2], true], // a lone em-dash vanishes
    ['a\u2014b', [1, 1], true], // ... and glues its neighbours
    ['wait - what ... ok', [5, 5], true], // a lone "-" or "..." is a word
    ['100% sure!', [2, 2], true],
    ['** bold ** #tag', [2, 2], true], // markdown symbols are not words
    ['a\u3000b\x1fc', [3, 3], true], // str.split separates at U+3000 and U+001F
    ['a\u200bb x\ufeffy', [2, 2], true], // zero-width space and BOM are neither \s nor \w: deleted
    ['caf\u00e9 na\u00efve \u6771\u4eac', [3, 3], true], // \w is Unicode
    ['one two three', [50, 80], false],
  ],
  check_whether_each_paragraph_word_count_in_range: [
    ['one two three\n\nfour five', [2, 3], true],
    ['one two three\n\nfour five', [3, 3], false],
  ],
  check_whether_whole_response_not_contain_certain_substring: [
    ['I like Apple pie', ['apple'], true], // case-sensitive
    ['pineapple', ['apple'], false], // a raw substring, no word boundary
    ['line one  \nline two', ['one\nline'], true], // on the raw text: the trailing spaces stay
  ],
  check_whether_whole_response_not_contain_certain_substrings: [
    ['banana bread', [['apple', 'banana']], false],
    ['cherry pie', [['apple', 'banana']], true],
    ['anything', [[]], true],
  ],
  check_whether_each_sentence_begin_with_certain_substring: [
    ['Swamps are wet. So are bogs.', ['S'], true],
    ['Swamps are wet. Bogs too.', ['S'], false],
    ['  Hello there.\n  How are you?', ['H'], true], // lines are stripped first
    ['', ['X'], true], // no sentence, nothing fails
  ],
  check_whether_each_sentence_end_with_certain_substring: [
    ['Wow! Great!', ['!'], true],
    ['Wow! Great.', ['!'], false],
    ['Is it? Yes?  \n', ['?'], true],
  ],
  check_whether_whole_response_begin_with_certain_substring: [
    ['  \n Once upon a time, there was.', ['Once upon a time'], true], // str.strip first
    ['once upon a time', ['Once'], false],
    ['\u3000Hi', ['Hi'], true], // strip removes U+3000 ...
    ['\ufeffHi', ['Hi'], false], // ... but not a BOM (which JS trim would remove)
  ],
  check_whether_whole_response_end_with_certain_substring: [
    ['The end.  \n', ['The end.'], true],
    ['The end.', ['end'], false],
  ],
  check_whether_each_paragraph_begin_with_certain_substring: [
    ['> a\n\n> b', ['>'], true],
    ['  > a  \n\n  > b', ['>'], true],
    ['> a\n\nb', ['>'], false],
    ['> a\nb', ['>'], true], // one paragraph
  ],
  check_whether_each_paragraph_end_with_certain_substring: [
    ['a ~\n\nb ~  ', ['~'], true],
    ['a ~\n\nb', ['~'], false],
  ],
  check_whether_each_keyword_in_list_mentioned_in_range: [
    ['Apple and apple and APPLE', [['apple'], 3, 3], true], // lowercased
    ['Mention GreenTech. greentech! GREENTECH', [['GreenTech'], 3, 3], true],
    ['a Redditor wrote', [['reddit'], 1, 10000], false], // word boundaries
    ['apples', [['apple'], 1, 1], false],
    ['pine-apple', [['apple'], 1, 1], true], // "-" is a boundary
    ['per se, and per  se', [['per se'], 1, 1], true], // a phrase matches literally: two spaces do not
    ['C++ and c++', [['c++'], 0, 0], true], // \b after "+" needs a word character next: never here
    ['\u03a3\u039f\u03a6\u039f\u03a3', [['\u03c3\u03bf\u03c6\u03bf\u03c2'], 1, 1], true], // final sigma, as str.lower
    ['nai\u0308ve', [['nai'], 1, 1], true], // a combining mark is not \w in Python
    ['apple banana', [['apple', 'banana', 'cherry'], 1, 10], false], // every keyword must be in range
  ],
  check_whether_total_keyword_in_list_mentioned_in_range: [
    ['apple banana', [['apple', 'banana', 'cherry'], 1, 10], true], // the sum must be in range
    ['apple apple banana', [['apple', 'banana'], 2, 2], false],
  ],
  check_number_precision_in_response: [
    ['In 2023 it was 3.14', [2], false], // the integer fails precision 2
    ['It costs 3.14 and 2.72', [2], true],
    ['No numbers here', [2], true],
    ['Pi is 3.14159', [2], false],
    ['Total: 1,234.56', [2], true],
    ['About 1.50e3 units', [2], true], // the mantissa counts
    ['Up 50% today', [0], true],
    ['Up 12.5% today', [1], true],
    ['COVID-19 cost 3.14', [2], false], // "19" is an integer
    ['version v2.0', [1], false], // "2" touches "v", so the match is the "0" after the dot
    ['Only 7 left', [0], true],
    ['Take .5 and .25', [1], false],
    ['H2O and B12', [2], true], // digits inside words are not numbers
  ],
  check_percentage_number_precision_in_response: [
    ['Up 50% today', [0], false], // a percentage without a decimal point always fails
    ['Up 50.00% today', [2], true],
    ['Up 12.5 % today', [1], true],
    ['Pi is 3.14', [2], true], // only numbers before "%" count
    ['Up 50.5%', [2], false],
    ['code a1.25%', [2], true], // no boundary check
  ],
  check_whether_has_no_arabic_number_in_response: [
    ['I have 3.', [], true], // a number followed by "." does not count
    ['COVID-19', [], false],
    ['three apples', [], true],
    ['3 apples', [], false],
    ['It is 3.5.', [], true],
    ['version 1.0', [], false],
    ['tiny: 5e-10', [], false],
    ['Drink H2O', [], true],
    ['Page 1, line 2', [], false],
    ['\u0663 apples', [], false], // \d is Unicode: Arabic-Indic three
  ],
};

/** Functions beyond the reference code: verdicts of our documented definitions (see their `note`). */
const BEYOND_REFERENCE: Record<string, Golden[]> = {
  check_whether_each_paragraph_sentence_number_exceeds: [
    ['One.\n\nOne. Two.\n\nOne. Two. Three.', [1, 3], true],
    ['One.\n\nOne. Two.\n\nOne. Two. Three.', [1, 2], false], // the last paragraph exceeds 2
    ['One.\n\nOne. Two.\n\nOne. Two. Three.', [2, 5], false], // exactly exceed_num more, not at least
    ['One.\n\nOne. Two. Three.', [2, 5], true],
    ['A. B. C.', [1, 3], true],
    ['', [1, 3], true],
  ],
  check_whether_each_paragraph_word_count_in_range_list: [
    [
      'one two three\n\nfour five',
      [
        [
          [3, 3],
          [2, 2],
        ],
      ],
      true,
    ],
    [
      "don't \u2014 stop\n\nfour five",
      [
        [
          [2, 2],
          [1, 2],
        ],
      ],
      true,
    ], // the reference word count
    ['one two three\n\nfour five', [[[3, 3]]], false],
  ],
  check_scientific_notation_precision_in_response: [
    ['It is 1.23e5 or 4.56E-3', [3], true],
    ['It is 1.2e5', [3], false],
    ['It is 1.23 \u00d7 10^5', [3], true],
    ['It is 1.23x10^5', [3], true],
    ['It is 1.20\u00b710\u2075', [3], true], // trailing zeros are significant
    ['It is 0.0012e3', [2], true], // leading zeros are not
    ['It is 0.00e0', [1], true], // an all-zero mantissa has one
    ['It is 1.23 \u00d7 10^{-5}', [3], true],
    ['It is 6.022 \u00d7 10**23', [4], true],
    ['It is 1.2e5 and 1.23e5', [2], false],
    ['In 2019, 4.20e3 units cost 3.14 each', [3], true], // years and ordinary numbers are not asked to convert
    ['It grew to 2,500,000 units', [3], false], // a large number left plain is a violation
    ['It grew from 2.50e6 to 3,000,000', [3], false], // one converted, one left plain
    ['It grew from 2.50e6 to 12345', [3], false],
    ['A dose of 0.00045 g', [2], false], // a small one too
    ['A dose of 4.5e-4 g, or 0.5 mg', [2], true],
  ],
};

/** The reference's verdict alone (the `vacuous` flag is ours, tested below), or the error. */
const verdictOf = (outcome: VerifierOutcome): boolean | VerifierOutcome => ('passed' in outcome ? outcome.passed : outcome);

for (const [title, table] of [
  ['reference', REFERENCE],
  ['beyond the reference', BEYOND_REFERENCE],
] as const) {
  for (const [func, rows] of Object.entries(table)) {
    test(`${title}: ${func}`, () => {
      for (const [response, params, expected] of rows) {
        assert.deepEqual(verdictOf(runVerifierCall(response, { func, params })), expected, `${JSON.stringify(response)} ${JSON.stringify(params)}`);
      }
    });
  }
}

test('every registered function has golden verdicts', () => {
  const covered = new Set([...Object.keys(REFERENCE), ...Object.keys(BEYOND_REFERENCE)]);
  assert.deepEqual(
    FUNCTIONS.map((f) => f.name).filter((name) => !covered.has(name)),
    [],
  );
});

test('the registry has every Table 7 and reference-code name, each resolving to one function', () => {
  const expected = {
    check_whether_response_paragraph_number_in_range: 'check_whether_response_paragraph_number_in_range',
    check_whether_each_keyword_in_list_metioned_in_range: 'check_whether_each_keyword_in_list_mentioned_in_range',
    check_whether_keywords_metioned_in_range: 'check_whether_each_keyword_in_list_mentioned_in_range',
    check_whether_keywords_mentioned_in_range: 'check_whether_each_keyword_in_list_mentioned_in_range',
    check_whether_total_keyword_in_list_metioned_in_range: 'check_whether_total_keyword_in_list_mentioned_in_range',
    check_whether_has_no_number_in_response: 'check_whether_has_no_arabic_number_in_response',
    check_percentage_precision_in_response: 'check_percentage_number_precision_in_response',
    check_scientific_notation_precision_in_response: 'check_scientific_notation_precision_in_response',
  };
  for (const [name, canonical] of Object.entries(expected)) assert.equal(resolveFunction(name)?.name, canonical, name);
  const names = FUNCTIONS.flatMap((f) => [f.name, ...f.aliases]);
  assert.equal(new Set(names).size, names.length, 'no name is used twice');
  assert.equal(FUNCTIONS.length, 22);
  for (const f of FUNCTIONS) assert.ok(f.example.includes('->'), `${f.name} has an example for the prompt`);
});

test('aliases give the canonical verdicts', () => {
  const call = (func: string, params: unknown[]) => runVerifierCall('Apple pie. apple tart. 3 apples', { func, params });
  assert.deepEqual(call('check_whether_keywords_mentioned_in_range', [['apple'], 2, 2]), { passed: true, vacuous: false }); // "apples" is not "apple"
  assert.deepEqual(call('check_whether_keywords_metioned_in_range', [['apple'], 3, 3]), { passed: false, vacuous: false });
  assert.deepEqual(call('check_whether_total_keyword_in_list_metioned_in_range', [['apple', 'pie'], 3, 3]), { passed: true, vacuous: false });
  assert.deepEqual(call('check_whether_has_no_number_in_response', []), { passed: false, vacuous: false });
  assert.deepEqual(call('check_percentage_precision_in_response', [2]), { passed: true, vacuous: true }); // no percentage in it
});

test('unknown functions and bad params are errors naming the function and the problem', () => {
  const error = (func: unknown, params?: unknown): string => {
    const outcome = runVerifierCall('Some text.', { func, params });
    assert.ok('error' in outcome, `expected an error for ${JSON.stringify({ func, params })}`);
    return outcome.error;
  };
  assert.match(error('check_whether_response_is_nice', []), /unknown verifier function 'check_whether_response_is_nice'/);
  assert.match(error(42, []), /func must be a function name/);
  const words = 'check_whether_response_word_count_in_range';
  assert.match(error(words, [1]), new RegExp(`^${words}: bad params \\[1\\], expected \\[lower_bound:int, upper_bound:int\\]`));
  assert.match(error(words, [1, 2, 3]), /params: Too big/);
  assert.match(error(words, ['1', 2]), /params\[0\]: .*expected number/);
  assert.match(error(words, { lower: 1 }), /expected tuple|expected array/);
  assert.match(error(words), /bad params \[\]/); // absent params count as []
  // A bare string where a list belongs: Python would iterate its characters; here it is an error.
  assert.match(error('check_whether_each_keyword_in_list_mentioned_in_range', ['apple', 1, 3]), /params\[0\]: .*expected array/);
  assert.match(error('check_whether_whole_response_not_contain_certain_substrings', ['apple']), /params\[0\]/);
  assert.match(error('check_whether_each_paragraph_sentence_number_in_range_list', [[[1, 2, 3]]]), /params\[0\]\[0\]/);
  assert.match(error('check_number_precision_in_response', [-1]), /params\[0\]/);
  assert.match(error('check_number_precision_in_response', [1.5]), /params\[0\]/);
  assert.match(error('check_whether_has_no_arabic_number_in_response', [1]), /Too big/);
});

test('cleanText strips every line with Python whitespace and joins with \\n', () => {
  assert.equal(cleanText('  a  \n\t b \r\n\n c \u3000\x85'), 'a\nb\n\nc');
  assert.equal(cleanText('a\x1cb\x1dc\x1ed\x0be\x0cf'), 'a\nb\nc\nd\ne\nf'); // str.splitlines boundaries
  assert.equal(cleanText('a\x1fb'), 'a\x1fb'); // whitespace, not a line boundary
  assert.equal(pyStrip('\ufeff x \u200b'), '\ufeff x \u200b'); // neither is Python whitespace
});

test('paragraphs, words and keyword counts follow the reference', () => {
  assert.deepEqual(paragraphs('# Title\n\n  Body one\nstill one  \n \n\nTwo'), ['# Title', 'Body one\nstill one', 'Two']);
  assert.deepEqual(words("don't \u2014 stop - now... #1 e\u0301t\u00e9"), ['dont', 'stop', '-', 'now...', '1', 'et\u00e9']);
  assert.deepEqual(keywordCounts('The cat, the CAT; concatenate. Cat\n\ncat', ['cat', 'the', 'dog']), [4, 2, 0]);
});

/** Example params of a function, from its prompt example (`"..." -> [params]`). */
const exampleParams = (example: string): unknown[] => JSON.parse(example.slice(example.lastIndexOf('->') + 2)) as unknown[];

test('vacuous: an empty answer exercises no check, and is flagged on every function', () => {
  for (const fn of FUNCTIONS) {
    for (const empty of ['', ' \n\n\t ']) {
      const outcome = runVerifierCall(empty, { func: fn.name, params: exampleParams(fn.example) });
      assert.ok('vacuous' in outcome && outcome.vacuous, `${fn.name} on ${JSON.stringify(empty)}`);
    }
  }
});

test("vacuous: the reference's known vacuous passes are flagged, their verdicts unchanged; exercised checks are not", () => {
  // [function, params, response, reference verdict, vacuous]; verdicts from function_and_compare.py (NOTES §7).
  const rows: Array<[string, unknown[], string, boolean, boolean]> = [
    ['check_number_precision_in_response', [2], 'The sky is blue and calm.', true, true], // no number: the loop never fails
    ['check_number_precision_in_response', [2], 'It costs 3.50 dollars.', true, false],
    ['check_number_precision_in_response', [2], 'It costs 3 dollars.', false, false],
    ['check_percentage_number_precision_in_response', [1], 'Most of it, roughly half.', true, true],
    ['check_percentage_number_precision_in_response', [1], 'About 50.0% of it.', true, false],
    ['check_scientific_notation_precision_in_response', [3], 'A plain 1234 in 2019.', true, true],
    ['check_scientific_notation_precision_in_response', [3], 'It is 2,500,000.', false, false], // unconverted: a violation, not a dodge
    ['check_whether_each_paragraph_word_count_in_range', [5, 10], '', true, true], // all([])
    ['check_whether_each_paragraph_sentence_number_in_range', [2, 3], '', true, true],
    ['check_whether_each_sentence_begin_with_certain_substring', ['!'], '', true, true],
    ['check_whether_each_paragraph_begin_with_certain_substring', ['>'], '> One.\n\n> Two.', true, false],
    ['check_whether_response_word_count_in_range', [0, 100], '', true, true], // "at most 100 words"
    ['check_whether_response_word_count_in_range', [0, 100], 'Ten words at most here.', true, false],
    ['check_whether_whole_response_not_contain_certain_substring', ['apple'], '', true, true],
    ['check_whether_whole_response_not_contain_certain_substring', ['apple'], 'A pear.', true, false], // avoided, not dodged
    ['check_whether_has_no_arabic_number_in_response', [], 'No digits here.', true, false],
  ];
  for (const [func, params, response, passed, vacuous] of rows) {
    assert.deepEqual(runVerifierCall(response, { func, params }), { passed, vacuous }, `${func} on ${JSON.stringify(response)}`);
  }
});

test('vacuous: a content-free answer (punctuation only) exercises no structural check', () => {
  // The reference counts "..." as a word, a sentence and a paragraph, so these pass as if exercised.
  for (const [func, params] of [
    ['check_whether_response_word_count_in_range', [0, 100]],
    ['check_whether_response_sentence_number_in_range', [1, 1]],
    ['check_whether_response_paragraph_number_in_range', [1, 1]],
    ['check_whether_each_paragraph_word_count_in_range', [0, 50]],
    ['check_whether_each_paragraph_sentence_number_in_range', [1, 2]],
    ['check_whether_whole_response_not_contain_certain_substring', ['apple']],
  ] as const) {
    for (const response of ['...', '\u2014', ' .\n\n!? ', '\u2026 \u2014 \u2026']) {
      const outcome = runVerifierCall(response, { func, params });
      assert.ok('vacuous' in outcome && outcome.vacuous, `${func} on ${JSON.stringify(response)}`);
    }
    for (const response of ['1.', 'Yes.', '\u00e9t\u00e9 \u2014']) {
      const outcome = runVerifierCall(response, { func, params });
      assert.ok('vacuous' in outcome && !outcome.vacuous, `${func} on ${JSON.stringify(response)} has content`);
    }
  }
});

test('vacuous: every function says in words when it is vacuous (docs/data-quality.md lists them)', () => {
  for (const fn of FUNCTIONS) assert.ok(fn.vacuity.length > 0, fn.name);
});
