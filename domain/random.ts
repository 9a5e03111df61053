/**
 * The one source of randomness of the pipeline: generators seeded by what a choice is about, and the
 * shuffles and samples drawn from them. Pure, so workflow code may use it too.
 */
import { createHash } from 'node:crypto';

/**
 * Seeded randomness. Every random choice of the pipeline draws from a generator seeded by
 * (build seed, sample id, purpose), so a choice never depends on processing order, retries or
 * which worker ran it: the same config and seed always give the same dataset.
 */
export type Rng = () => number;

export function rngFor(...parts: Array<string | number>): Rng {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  let state = digest.readUInt32LE(0) ^ digest.readUInt32LE(4);
  // mulberry32: tiny, fast, and good enough for sampling choices (not for cryptography).
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher-Yates on a copy. */
export function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** k distinct items, in their original order (so prompts list them stably). */
export function sampleK<T>(rng: Rng, items: readonly T[], k: number): T[] {
  const picked = new Set(
    shuffled(
      rng,
      items.map((_, i) => i),
    ).slice(0, Math.min(k, items.length)),
  );
  return items.filter((_, i) => picked.has(i));
}

export function pickOne<T>(rng: Rng, items: readonly T[]): T {
  if (items.length === 0) throw new Error('pickOne: no items to pick from');
  return items[Math.floor(rng() * items.length)]!;
}
