import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecordStartScanner } from '../../sources/readers/recordStart.js';

/** The definition, as one regular expression over all the bytes at once (what the scanner replaced). */
function wholeText(bytes: Buffer, keys: readonly string[]): number | undefined {
  const alternatives = keys.map((key) => key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  const boundary = /[ \t\r\n]/.source;
  const re = new RegExp(`\\}${boundary}*,${boundary}*(\\{${boundary}*(?:${alternatives})${boundary}*:)`, 'g');
  re.lastIndex = 1;
  const m = re.exec(bytes.toString('latin1'));
  return m ? m.index + m[0].length - m[1]!.length : undefined;
}

/** Feeds `bytes` in pieces ending at `cuts`, each piece once; returns the start and the piece it was found in. */
function scan(bytes: Buffer, keys: readonly string[], cuts: readonly number[]): { start?: number; piece?: number } {
  const scanner = new RecordStartScanner(keys);
  const ends = [...cuts, bytes.length];
  let from = 0;
  for (let piece = 0; piece < ends.length; piece++) {
    const start = scanner.feed(bytes.subarray(from, ends[piece]));
    if (start !== undefined) return { start, piece };
    from = ends[piece]!;
  }
  return {};
}

const CASES: Array<{ name: string; text: string; keys: string[] }> = [
  { name: 'compact', text: '{"id": "1", "t": "unterminated}, {"id": "2"}', keys: ['"id"'] },
  { name: 'indented', text: '{\n  "id": "1\n  },\n  {\n    "id": "2"\n  }', keys: ['"id"'] },
  { name: 'a nested object first (other key)', text: '{"id": "1, "turns": [{"from": "x"}, {"from": "y"}]}, {"id": "2"}', keys: ['"id"'] },
  { name: 'either of two keys', text: '{"key": "1, "a": {"b": 1}, {"other": 2}, {"key": 3}', keys: ['"id"', '"key"'] },
  { name: 'near misses', text: '{"id": "1 }, ["id": 1], }, {"id" 2, }, {"idx": 3, }; {"id": 4}, {"id": 5}', keys: ['"id"'] },
  { name: 'a key holding a }', text: '{"a}, {"a": "1}, {"a}, {"a": 2}', keys: ['"a}, {"a"'] },
  { name: 'a } inside a partly matched key starts the next candidate', text: '{"x": "1}, {"a}, {"a}, {"a": 2}', keys: ['"a}, {"a"'] },
  { name: 'a } at the first byte does not count', text: '}, {"id": 1}', keys: ['"id"'] },
  { name: 'no next record', text: '{"id": "1, "x": "y"}, {"name": 2}, {"id" : ', keys: ['"id"'] },
];

describe('RecordStartScanner', () => {
  for (const { name, text, keys } of CASES) {
    it(`finds what the whole-text expression finds, however the bytes are cut: ${name}`, () => {
      const bytes = Buffer.from(text);
      const expected = wholeText(bytes, keys);
      assert.equal(scan(bytes, keys, []).start, expected, 'one piece');
      for (let cut = 0; cut <= bytes.length; cut++) assert.equal(scan(bytes, keys, [cut]).start, expected, `cut at ${cut}`);
      const bytewise = Array.from({ length: bytes.length }, (_, i) => i + 1);
      assert.equal(scan(bytes, keys, bytewise).start, expected, 'byte by byte');
    });
  }

  it('finds a start whose tokens span many pieces, each piece fed once, counted from the first byte fed', () => {
    // The boundary's whitespace alone spans 1 MiB: pieces fed earlier are never given again.
    const text = `{"id": "1, "x": "${'y'.repeat(5000)}}  ,${' '.repeat(1 << 20)}{\n  "id": 2}`;
    const bytes = Buffer.from(text);
    const brace = text.lastIndexOf('{');
    const cuts = Array.from({ length: Math.floor(bytes.length / 4096) }, (_, i) => (i + 1) * 4096);
    const { start, piece } = scan(bytes, ['"id"'], cuts);
    assert.equal(start, brace);
    assert.equal(piece, cuts.length, 'found in the last piece, where the key ends');
  });
});
