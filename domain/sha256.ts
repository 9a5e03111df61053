/**
 * SHA-256 of a short string in plain JavaScript. Planning hashes every record of a dataset twice
 * (its sample id, then its seeded rank): for inputs of a few dozen bytes, node:crypto's per-call
 * cost (a Hash object with a native handle, then garbage) was ~1.5 µs a hash and the largest cost
 * of planning millions of records; this is a fraction of that. Same digest as node:crypto,
 * checked in test/unit/sha256.test.ts (UTF-8 encoding, lone surrogates as U+FFFD, every length).
 */
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const INITIAL = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/** Inputs up to this many UTF-16 units take this path (at most 3 bytes each: 12 blocks). */
export const SHORT_INPUT = 180;

const encoder = new TextEncoder();
const message = new Uint8Array(SHORT_INPUT * 3 + 72);
const words = new Int32Array(64);
const state = new Int32Array(8);
const hex = Buffer.alloc(64);

/** Hex SHA-256 of the UTF-8 bytes of `text`, which has at most SHORT_INPUT UTF-16 units. */
export function sha256HexShort(text: string): string {
  if (text.length > SHORT_INPUT) throw new RangeError(`sha256HexShort takes at most ${SHORT_INPUT} UTF-16 units, got ${text.length}`);
  const { written: length } = encoder.encodeInto(text, message);
  // Padding: 0x80, zeros, then the length in bits as a 64-bit big-endian integer.
  const total = (((length + 8) >> 6) + 1) << 6;
  message.fill(0, length, total);
  message[length] = 0x80;
  const bits = length * 8;
  message[total - 4] = bits >>> 24;
  message[total - 3] = (bits >>> 16) & 0xff;
  message[total - 2] = (bits >>> 8) & 0xff;
  message[total - 1] = bits & 0xff;
  state.set(INITIAL);
  for (let block = 0; block < total; block += 64) compress(block);
  // One flat string from a buffer: 32 concatenations would allocate a chain of string pieces.
  for (let i = 0; i < 8; i++) {
    const h = state[i]!;
    for (let digit = 0; digit < 8; digit++) hex[8 * i + digit] = HEX_DIGITS[(h >>> (28 - 4 * digit)) & 0xf]!;
  }
  return hex.toString('latin1');
}

function compress(offset: number): void {
  for (let i = 0; i < 16; i++) {
    const at = offset + i * 4;
    words[i] = (message[at]! << 24) | (message[at + 1]! << 16) | (message[at + 2]! << 8) | message[at + 3]!;
  }
  for (let i = 16; i < 64; i++) {
    const w15 = words[i - 15]!;
    const w2 = words[i - 2]!;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    words[i] = (words[i - 16]! + s0 + words[i - 7]! + s1) | 0;
  }
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let e = state[4]!;
  let f = state[5]!;
  let g = state[6]!;
  let h = state[7]!;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const ch = (e & f) ^ (~e & g);
    const t1 = (h + S1 + ch + K[i]! + words[i]!) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const maj = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (S0 + maj) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0;
  state[5] = (state[5]! + f) | 0;
  state[6] = (state[6]! + g) | 0;
  state[7] = (state[7]! + h) | 0;
}
