import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { runVerifyCommand } from '../../verification/verifyCommand.js';

/** Runs the command on `input` lines (objects are JSON-encoded, strings sent as they are). */
async function verify(args: string[], input: unknown[], sink: { highWaterMark?: number; slow?: boolean } = {}) {
  const text = input.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n');
  let written = '';
  const stdout = new Writable({
    highWaterMark: sink.highWaterMark,
    write(chunk: Buffer, _encoding, done) {
      written += chunk.toString();
      if (sink.slow) void nextTurn().then(() => done());
      else done();
    },
  });
  const code = await runVerifyCommand(args, Readable.from([text]), stdout);
  return {
    code,
    lines: written
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const WORDS = 'check_whether_response_word_count_in_range';

test('calls mode: one verdict per line, in input order, errors in place, exit 1', async () => {
  const { code, lines } = await verify(
    [],
    [
      { id: 'a', response: 'one two three', func: WORDS, params: [3, 3] },
      { id: 'b', response: 'one two three', func: WORDS, params: [4, 10000] },
      'this is not JSON',
      '',
      { id: 7, response: 'x', func: 'no_such_function', params: [] },
      { id: 8, response: 'x', func: WORDS, params: ['3', 3] },
      { id: 9, response: 42, func: WORDS, params: [1, 1] },
      [1, 2],
      { response: 'I have 3.', func: 'check_whether_has_no_number_in_response', params: [] },
    ],
  );
  assert.equal(code, 1);
  assert.deepEqual(lines.slice(0, 2), [
    { id: 'a', passed: true, vacuous: false },
    { id: 'b', passed: false, vacuous: false },
  ]);
  assert.equal(lines.length, 8, 'the blank line is skipped, every other line answered');
  assert.deepEqual(
    lines.slice(2).map((l) => l.id),
    [null, 7, 8, 9, null, null],
  );
  assert.match(String(lines[2]!.error), /line 3 is not JSON/);
  assert.match(String(lines[3]!.error), /unknown verifier function 'no_such_function'/);
  assert.match(String(lines[4]!.error), new RegExp(`^${WORDS}: bad params`));
  assert.match(String(lines[5]!.error), /line\[response\]: .*expected string/);
  assert.match(String(lines[6]!.error), /expected object/);
  assert.deepEqual(lines[7], { id: null, passed: true, vacuous: false });
});

test('calls mode: exit 0 when every line was verified, failing verdicts included', async () => {
  const { code, lines } = await verify([], [{ id: 1, response: 'a b', func: WORDS, params: [5, 9] }]);
  assert.equal(code, 0);
  assert.deepEqual(lines, [{ id: 1, passed: false, vacuous: false }]);
});

test('records mode: all calls of a constraint must pass; unverified and errored constraints leave passRate', async () => {
  const { code, lines } = await verify(
    ['--records'],
    [
      {
        id: 's1',
        response: 'Apple pie.\n\nApple tart.',
        constraints: [
          {
            type: 'paragraph_number_limit',
            value: 'exactly 2 paragraphs',
            verifiers: [{ func: 'check_whether_response_paragraph_number_in_range', params: [2, 2] }],
          },
          {
            type: 'prefix_and_suffix',
            verifiers: [
              { func: 'check_whether_whole_response_begin_with_certain_substring', params: ['Apple'] },
              { func: 'check_whether_whole_response_end_with_certain_substring', params: ['pie.'] },
            ],
          },
          { type: 'tone_requirement', value: 'cheerful' },
          { type: 'mention', verifiers: [] },
        ],
      },
      { id: 's2', response: 'x', constraints: [{ type: 'precision' }] },
    ],
  );
  assert.equal(code, 0);
  assert.deepEqual(lines[0], {
    id: 's1',
    verdicts: [
      {
        index: 0,
        type: 'paragraph_number_limit',
        passed: true,
        vacuous: false,
        details: [{ func: 'check_whether_response_paragraph_number_in_range', passed: true, vacuous: false }],
      },
      {
        index: 1,
        type: 'prefix_and_suffix',
        passed: false,
        vacuous: false,
        details: [
          { func: 'check_whether_whole_response_begin_with_certain_substring', passed: true, vacuous: false },
          { func: 'check_whether_whole_response_end_with_certain_substring', passed: false, vacuous: false },
        ],
      },
      { index: 2, type: 'tone_requirement', passed: null, details: [] },
      { index: 3, type: 'mention', passed: null, details: [] },
    ],
    passRate: 0.5,
    unverified: 2,
    errors: 0,
  });
  assert.deepEqual(lines[1], { id: 's2', verdicts: [{ index: 0, type: 'precision', passed: null, details: [] }], passRate: null, unverified: 1, errors: 0 });
});

test('records mode: a bad call makes its constraint an error, the record still gets its verdicts, exit 1', async () => {
  const { code, lines } = await verify(
    ['--records'],
    [
      {
        id: 'r',
        response: 'Hello.',
        constraints: [
          { type: 'mention', verifiers: [{ func: 'check_whether_each_keyword_in_list_mentioned_in_range', params: ['hello', 1, 2] }] },
          { type: 'word_count_range_limit', verifiers: [{ func: WORDS, params: [1, 1] }] },
        ],
      },
      { id: 'bad', response: 'Hello.', constraints: 'none' },
    ],
  );
  assert.equal(code, 1);
  const [first, second] = lines;
  const verdicts = first!.verdicts as Record<string, unknown>[];
  assert.equal(verdicts[0]!.passed, null);
  assert.match(String(verdicts[0]!.error), /params\[0\]/);
  assert.equal(verdicts[1]!.passed, true);
  assert.deepEqual([first!.passRate, first!.unverified, first!.errors], [1, 0, 1]);
  assert.equal(second!.id, 'bad');
  assert.match(String(second!.error), /line\[constraints\]/);
});

test('--vacuous: pass (default) keeps the reference verdict of a vacuous pass and flags it; fail counts it as not passed', async () => {
  const precision = { func: 'check_number_precision_in_response', params: [2] };
  const lines = [
    { id: 'none', response: 'No numbers at all.', ...precision },
    { id: 'some', response: 'It is 3.50.', ...precision },
  ];
  assert.deepEqual((await verify([], lines)).lines, [
    { id: 'none', passed: true, vacuous: true },
    { id: 'some', passed: true, vacuous: false },
  ]);
  assert.deepEqual((await verify(['--vacuous', 'fail'], lines)).lines, [
    { id: 'none', passed: false, vacuous: true },
    { id: 'some', passed: true, vacuous: false },
  ]);
  const records = await verify(['--records', '--vacuous', 'fail'], [{ id: 'r', response: '', constraints: [{ type: 'precision', verifiers: [precision] }] }]);
  assert.deepEqual(records.lines[0]!.passRate, 0);
  const stderr = process.stderr.write;
  process.stderr.write = () => true; // the usage text is expected noise here
  try {
    assert.equal((await verify(['--vacuous', 'maybe'], [])).code, 2);
  } finally {
    process.stderr.write = stderr;
  }
});

test('output keeps input order under backpressure from a slow reader', async () => {
  const input = Array.from({ length: 3000 }, (_, id) => ({ id, response: 'w '.repeat(id % 7), func: WORDS, params: [3, 3] }));
  const { code, lines } = await verify([], input, { highWaterMark: 64, slow: true });
  assert.equal(code, 0);
  assert.deepEqual(
    lines.map((l) => l.id),
    input.map((l) => l.id),
  );
  assert.ok(lines.every((l, i) => l.passed === (i % 7 === 3)));
});

test('usage: unknown option exits 2, --help exits 0', async () => {
  const stderr = process.stderr.write;
  process.stderr.write = () => true; // the usage text is expected noise here
  try {
    assert.equal((await verify(['--bogus'], [])).code, 2);
    assert.equal((await verify(['extra'], [])).code, 2);
  } finally {
    process.stderr.write = stderr;
  }
  let help = '';
  const stdout = new Writable({ write: (chunk: Buffer, _e, done) => ((help += chunk.toString()), done()) });
  assert.equal(await runVerifyCommand(['--help'], Readable.from([]), stdout), 0);
  assert.match(help, /usage: mmif verify \[--records\]/);
});
