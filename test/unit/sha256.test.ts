import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { sha256Hex } from '../../domain/hashing.js';
import { SHORT_INPUT, sha256HexShort } from '../../domain/sha256.js';

const crypto = (text: string) => createHash('sha256').update(text).digest('hex');

test('the JavaScript SHA-256 gives node:crypto\'s digest for every length and padding case it takes', () => {
  // Every length crosses the one-, two- and many-block padding boundaries (55/56/64 bytes...).
  for (let length = 0; length <= SHORT_INPUT; length++) {
    const ascii = Array.from({ length }, (_, i) => String.fromCharCode(32 + ((i * 7 + length) % 95))).join('');
    assert.equal(sha256HexShort(ascii), crypto(ascii), `ascii of length ${length}`);
  }
  assert.equal(sha256HexShort(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
});

test('multi-byte UTF-8, NUL and lone surrogates are encoded as node:crypto encodes them', () => {
  const pieces = ['é', '€', '𝔘', '\u0000', '\ud800', '\udfff', 'a', '日本'];
  let seed = 7;
  for (let n = 0; n < 2000; n++) {
    let text = '';
    const length = n % SHORT_INPUT;
    while (text.length < length) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      text += pieces[seed % pieces.length];
    }
    text = text.slice(0, length); // may cut a surrogate pair: a lone surrogate
    assert.equal(sha256HexShort(text), crypto(text), JSON.stringify(text));
  }
});

test('sha256Hex takes the short path only where it agrees, and node:crypto beyond it', () => {
  const long = 'x'.repeat(SHORT_INPUT + 1);
  assert.throws(() => sha256HexShort(long), RangeError);
  assert.equal(sha256Hex(long), crypto(long));
  assert.equal(sha256Hex('cc3m\u0000000000123'), crypto('cc3m\u0000000000123'));
  assert.equal(sha256Hex(Buffer.from('abc')), crypto('abc'));
});
