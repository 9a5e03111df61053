/** Hashing and a seedable PRNG: every simulated reply and fault is a pure function of a hash. */
import { createHash } from 'node:crypto';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** Up to `k` distinct items in random order. */
  sample<T>(items: readonly T[], k: number): T[];
  chance(probability: number): boolean;
}

/**
 * sfc32 seeded from the first 128 bits of a hex hash: tiny, fast and identical on every
 * platform, unlike Math.random.
 */
export function rngFromHex(hex: string): Rng {
  const words = [0, 8, 16, 24].map((at) => Number.parseInt(hex.slice(at, at + 8).padEnd(8, '0'), 16) | 0);
  let [a, b, c, d] = words as [number, number, number, number];
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  // Mix the state before use so seeds sharing a prefix diverge.
  for (let i = 0; i < 12; i++) next();
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    pick<T>(items: readonly T[]): T {
      const item = items[int(0, items.length - 1)];
      if (item === undefined) throw new Error('pick() from an empty list');
      return item;
    },
    sample<T>(items: readonly T[], k: number): T[] {
      const pool = [...items];
      const out: T[] = [];
      while (out.length < k && pool.length > 0) out.push(...pool.splice(int(0, pool.length - 1), 1));
      return out;
    },
    chance: (probability) => next() < probability,
  };
}
