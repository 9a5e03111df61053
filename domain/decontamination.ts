/**
 * Decontamination against evaluation sets (config `decontaminate`): an index of each set's images
 * and questions, and the match of a training sample against it. Pure; the images' hashes are
 * computed by the caller (pipeline/decontamination.ts). Images match by sha256 (an exact copy), or
 * in two stages: a dHash within CANDIDATE_BITS names candidates and their renderings confirm the
 * same picture (domain/imageMatch.ts); one close but not confirmed is a near miss, listed, not
 * removed. Texts match by a shared 13-gram of lowercased words (GPT-3's unit, Brown et al. 2020,
 * app. C); a question under 13 words only word for word on an image that is a near miss of its item.
 */
import { likeness, NEAR_MISS_WORST, SAME_PICTURE_WORST, type Rendering } from './imageMatch.js';

/** Where an evaluation item comes from: the set's `name` and the item's `index` in it. */
export interface EvalItemRef {
  name: string;
  index: string;
}

export interface Contamination extends EvalItemRef {
  /** What matched, for the rejection reason. */
  how: string;
}

/** An evaluation image that a training image came close to without being confirmed the same picture. */
export interface NearMiss extends EvalItemRef {
  /** domain/imageMatch.ts's largest unexplained deviation, rounded. */
  worst: number;
}

interface ImageMatch {
  match?: Contamination;
  nearMisses: NearMiss[];
}

/**
 * Most bits two dHashes may differ by for the pair to be compared pixel by pixel: loose on purpose
 * (copies moved up to 21 bits in bench/decontamination.ts); the rendering decides.
 */
export const CANDIDATE_BITS = 24;

const NGRAM = 13;

/** What an image is compared by (image/perceptualHash.ts computes it). */
export interface Fingerprint {
  dHash: bigint;
  rendering: Rendering;
}

/** Lowercased words (letters and digits) of a text. */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Every run of `n` consecutive words, joined by single spaces. */
export function ngrams(words: readonly string[], n = NGRAM): string[] {
  const grams: string[] = [];
  for (let i = 0; i + n <= words.length; i++) grams.push(words.slice(i, i + n).join(' '));
  return grams;
}

export function hammingDistance(a: bigint, b: bigint): number {
  let diff = a ^ b;
  let count = 0;
  while (diff) {
    diff &= diff - 1n; // clears the lowest set bit
    count += 1;
  }
  return count;
}

export class EvalSetIndex {
  private readonly bySha256 = new Map<string, EvalItemRef>();
  private readonly perceptual: Array<{ fingerprint: Fingerprint; item: EvalItemRef }> = [];
  private readonly byGram = new Map<string, EvalItemRef>();
  private readonly byShortText = new Map<string, EvalItemRef[]>();
  /** Items indexed, per set name. */
  readonly items: Record<string, number> = {};

  addItem(item: EvalItemRef): void {
    this.items[item.name] = (this.items[item.name] ?? 0) + 1;
  }

  addImage(item: EvalItemRef, sha256: string, fingerprint: Fingerprint): void {
    if (!this.bySha256.has(sha256)) this.bySha256.set(sha256, item);
    this.perceptual.push({ fingerprint, item });
  }

  addQuestion(item: EvalItemRef, question: string): void {
    const words = wordsOf(question);
    if (words.length === 0) return;
    if (words.length < NGRAM) {
      const key = words.join(' ');
      this.byShortText.set(key, [...(this.byShortText.get(key) ?? []), item]);
      return;
    }
    for (const gram of ngrams(words)) if (!this.byGram.has(gram)) this.byGram.set(gram, item);
  }

  /** The evaluation item the image is a copy of, if any, and the items it came close to. */
  matchImage(sha256: string, fingerprint: Fingerprint): ImageMatch {
    const exact = this.bySha256.get(sha256);
    if (exact) return { match: { ...exact, how: 'image: identical bytes (sha256)' }, nearMisses: [] };
    let best: { worst: number; bits: number; item: EvalItemRef } | undefined;
    const nearMisses: NearMiss[] = [];
    for (const { fingerprint: theirs, item } of this.perceptual) {
      const bits = hammingDistance(theirs.dHash, fingerprint.dHash);
      if (bits > CANDIDATE_BITS) continue;
      const { worst } = likeness(theirs.rendering, fingerprint.rendering);
      if (worst <= SAME_PICTURE_WORST) {
        if (!best || worst < best.worst) best = { worst, bits, item };
      } else if (worst <= NEAR_MISS_WORST) nearMisses.push({ ...item, worst: Math.round(worst) });
    }
    if (!best) return { nearMisses };
    const how = `image: the same picture (dHash ${best.bits} of 64 bits, pixels within ${best.worst.toFixed(1)} grey levels, at most ${SAME_PICTURE_WORST})`;
    return { match: { ...best.item, how }, nearMisses: [] };
  }

  /**
   * The evaluation item whose question the text copies: a shared 13-gram, or a short question word
   * for word when the sample's image is a near miss of that item (`near`).
   */
  matchText(text: string, near: readonly EvalItemRef[] = []): Contamination | undefined {
    const words = wordsOf(text);
    const short = this.byShortText.get(words.join(' '))?.find((item) => near.some((n) => n.name === item.name && n.index === item.index));
    if (short) return { ...short, how: 'instruction: the same text as its question, on an image close to its image' };
    for (const gram of ngrams(words)) {
      const item = this.byGram.get(gram);
      if (item) return { ...item, how: `instruction: shares the ${NGRAM}-gram "${gram}"` };
    }
    return undefined;
  }
}

/** The rejection reason of a contaminated sample: `contaminated: <name> <index>: <what matched>`. */
export const contaminationReason = (c: Contamination): string => `contaminated: ${c.name} ${c.index}: ${c.how}`;
