import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonArrayError, jsonArrayElements, type JsonArrayItem, type JsonArrayOptions } from '../../sources/readers/jsonArrayStream.js';

/** Streams `text` in chunks of `size` bytes, so every boundary case is hit by some size. */
async function parse(text: string | Buffer, size = 1 << 16, options?: JsonArrayOptions): Promise<JsonArrayItem[]> {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  async function* chunks() {
    for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
  }
  const items: JsonArrayItem[] = [];
  for await (const item of jsonArrayElements(chunks(), options)) items.push(item);
  return items;
}

const TRICKY = [
  { id: 'a', text: 'commas, ] brackets } and "quotes" \\ in strings', nested: [[1, { x: [] }], {}] },
  'a string element',
  42,
  null,
  { emoji: '日本語 ✓ 😀', escaped: '\u0000\n\t' },
];

describe('jsonArrayElements', () => {
  it('yields every element, whatever the chunk boundaries (strings, escapes, nesting, multi-byte UTF-8)', async () => {
    const text = JSON.stringify(TRICKY, null, 2);
    for (const size of [1, 2, 3, 7, 64, 1 << 16]) {
      const items = await parse(text, size);
      assert.deepEqual(
        items.map((i) => ('value' in i ? i.value : i)),
        TRICKY,
        `chunk size ${size}`,
      );
      assert.deepEqual(
        items.map((i) => i.index),
        [0, 1, 2, 3, 4],
      );
    }
  });

  it('gives each element its byte offset in the file', async () => {
    const text = '\ufeff[ {"a":"é"},\n  7 ]';
    const items = await parse(text, 1);
    const bytes = Buffer.from(text);
    assert.deepEqual(
      items.map((i) => i.offset),
      [bytes.indexOf('{'), bytes.indexOf('7')],
    );
  });

  it('reports a malformed element with its index and offset, and goes on with the next', async () => {
    const text = '[{"id": 1}, {"id": 2, "image": }, {"id": 3}, {id: 4}, {"id": 5}]';
    for (const size of [1, 5, 1 << 16]) {
      const items = await parse(text, size);
      assert.deepEqual(
        items.map((i) => ('value' in i ? i.value : 'error')),
        [{ id: 1 }, 'error', { id: 3 }, 'error', { id: 5 }],
      );
      const bad = items[1]!;
      assert.ok('error' in bad);
      assert.equal(bad.offset, text.indexOf('{"id": 2'));
      assert.match(bad.error, /not valid JSON/);
    }
  });

  it('resynchronises after an unterminated string in the middle: one element skipped, the later ones kept', async () => {
    const records = [
      { id: 1, value: 'a' },
      { id: 2, value: 'b' },
      { id: 3, value: 'c' },
      { id: 4, value: 'd' },
    ];
    const text = JSON.stringify(records, null, 2).replace('"value": "b"', '"value": "b');
    for (const size of [1, 3, 1 << 16]) {
      const items = await parse(text, size);
      assert.deepEqual(
        items.map((i) => ('value' in i ? i.value : 'error')),
        [records[0], 'error', records[2], records[3]],
        `chunk size ${size}`,
      );
      const bad = items[1]!;
      assert.ok('error' in bad && /unterminated string \(a line break inside it at byte \d+\)/.test(bad.error), JSON.stringify(bad));
      assert.equal(bad.offset, text.indexOf('{\n    "id": 2'));
    }
  });

  it('resynchronises after an unterminated string in the middle, keeping every later record and saying what was skipped', async () => {
    // LLaVA-shaped records (ALLaVA/Geo170K/MultiUI), pretty-printed and compact; record 2's image path loses its closing quote.
    const records = Array.from({ length: 6 }, (_, i) => ({
      id: String(i),
      image: `images/${i}.jpg`,
      conversations: [
        { from: 'human', value: `<image>\nQ ${i}, with "quotes", [brackets] and {braces}` },
        { from: 'gpt', value: `A ${i}` },
      ],
    }));
    for (const indent of [0, 4]) {
      const text = JSON.stringify(records, null, indent).replace('"images/2.jpg"', '"images/2.jpg');
      const next = Buffer.from(text).indexOf(indent ? '{\n        "id": "3"' : '{"id":"3"');
      for (const size of [1, 7, 1 << 16]) {
        const items = await parse(text, size);
        assert.deepEqual(
          items.map((i) => ('value' in i ? (i.value as { id: string }).id : `error #${i.index}`)),
          ['0', '1', 'error #2', '3', '4', '5'],
          `indent ${indent}, chunk ${size}`,
        );
        const skipped = items[2]!;
        assert.ok('error' in skipped);
        assert.equal(skipped.offset, Buffer.from(text).indexOf(indent ? '{\n        "id": "2"' : '{"id":"2"'));
        assert.match(skipped.error, new RegExp(`; ${next - skipped.offset} bytes skipped \\(1 record\\), reading resumes at the next record, byte ${next}$`));
      }
    }
  });

  it("resynchronises when an unterminated string swallows the rest of the file, using the records' shared first key", async () => {
    // ChartQA-shaped: {imgname, query, label}; the damaged record's opening quote is doubled, so the string never closes in step.
    const text = '[{"imgname": "1.png", "query": "q1", "label": "3"}, {"imgname": "2.png", "query": "q2, "label": "4"}, {"imgname": "3.png", "query": "q3", "label": "5"}]';
    for (const size of [1, 5, 1 << 16]) {
      const items = await parse(text, size);
      assert.deepEqual(
        items.map((i) => ('value' in i ? (i.value as { imgname: string }).imgname : 'error')),
        ['1.png', 'error', '3.png'],
      );
      assert.deepEqual(
        items.map((i) => i.index),
        [0, 1, 2],
      );
    }
    const swallowed = await parse('[{"id": "1"}, {"id": "2, "x": 1}, {"id": "3"}, {"id": "4"}]');
    assert.deepEqual(
      swallowed.map((i) => ('value' in i ? i.value : 'error')),
      [{ id: '1' }, 'error', { id: '3' }, { id: '4' }],
    );
    const runaway = swallowed[1]!;
    assert.ok('error' in runaway && /runs to the end of the file|not valid JSON/.test(runaway.error) && /1 record/.test(runaway.error), JSON.stringify(runaway));
  });

  it('reports the runaway element as truncated when no record follows it', async () => {
    const items = await parse('[{"id": "1"}, {"id": "2, "x": 1}]');
    assert.equal(items.length, 2);
    const last = items[1]!;
    assert.ok('error' in last && /truncated/.test(last.error), JSON.stringify(last));
  });

  it('reports a malformed last record as not valid JSON, not as a truncated file', async () => {
    const items = await parse('[\n{"id": "1"},\n{"id": "broken", "image": , "conversations": []}\n]\n');
    assert.equal(items.length, 2);
    const last = items[1]!;
    assert.ok('error' in last && /not valid JSON/.test(last.error) && !/truncated/.test(last.error), JSON.stringify(last));
  });

  it('reports an element that is not valid UTF-8 as encoding:, and goes on', async () => {
    const bytes = Buffer.concat([Buffer.from('[{"caption": "caf'), Buffer.from([0xe9]), Buffer.from('"}, {"caption": "ok"}]')]);
    const items = await parse(bytes, 4);
    assert.equal(items.length, 2);
    assert.ok('error' in items[0]! && items[0].error.startsWith('encoding: this element is not valid UTF-8'), JSON.stringify(items[0]));
    assert.deepEqual('value' in items[1]! && items[1].value, { caption: 'ok' });
  });

  it('reports an empty element between two commas', async () => {
    const items = await parse('[1,,2]');
    assert.deepEqual(
      items.map((i) => ('value' in i ? i.value : i.error)),
      [1, 'empty element (two commas in a row)', 2],
    );
  });

  it('yields the complete elements of a truncated file, then a problem', async () => {
    const inside = await parse('[{"id": 1}, {"id": 2}, {"id": 3, "conv');
    assert.deepEqual(
      inside.slice(0, 2).map((i) => ('value' in i ? i.value : i)),
      [{ id: 1 }, { id: 2 }],
    );
    const last = inside[2]!;
    assert.ok('error' in last && /ends inside this element.*truncated/.test(last.error));
    assert.equal(last.index, 2);

    const between = await parse('[{"id": 1},\n');
    assert.equal(between.length, 2);
    assert.ok('error' in between[1]! && /before the array's closing \] \(truncated\)/.test(between[1].error));

    const empty = await parse('');
    assert.ok(empty.length === 1 && 'error' in empty[0]! && /empty/.test(empty[0].error));
  });

  it('accepts an empty array and a trailing comma, and reports content after the array', async () => {
    assert.deepEqual(await parse(' [ ] \n'), []);
    assert.deepEqual(
      (await parse('[1, 2,]')).map((i) => ('value' in i ? i.value : i)),
      [1, 2],
    );
    const after = await parse('[1] [2]');
    assert.ok('error' in after[1]! && /after the closing/.test(after[1].error));
  });

  it('refuses input that is not a JSON array', async () => {
    await assert.rejects(parse('{"data": []}'), (err: unknown) => err instanceof JsonArrayError && /found "\{" at byte 0/.test(err.message));
    await assert.rejects(parse('{"a": 1}\n{"a": 2}\n'), JsonArrayError);
  });

  it('gives up on an element that outgrows the limit instead of holding the rest of the file', async () => {
    const text = `[{"id": 1}, {"id": "unterminated, ${'x'.repeat(5000)}"}, {"id": 3}]`.replace('"}, {"id": 3}]', '');
    const items = await parse(text, 100, { maxElementBytes: 1000 });
    assert.equal(items.length, 2);
    assert.ok('error' in items[1]! && /exceeds 1000 bytes/.test(items[1].error));
  });
});
