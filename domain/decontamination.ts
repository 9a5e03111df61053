/**
 * Decontamination against evaluation sets (config `decontaminate`): an index of each set's images
 * and questions, and the match of a training sample against it. Pure; the images' hashes are
 * computed by the caller (pipeline/decontamination.ts). Images match by sha256 (an exact copy) or by
 * dHash (a re-encoded or resized copy); texts by a shared 13-gram of lowercased words (GPT-3's
 * decontamination unit, Brown et al. 2020, appendix C), and a question of fewer than 13 words only
 * word for word: a short question ("Describe the image.") shares its words with too much else.
 */

/** Where an evaluation item comes from: the set's `name` and the item's `index` in it. */
export interface EvalItemRef {
  name: string;
  index: string;
}

export interface Contamination extends EvalItemRef {
  /** What matched, for the rejection reason. */
  how: string;
}

/**
 * Most bits two dHashes may differ by and still be the same picture
 * (docs/adr/0013-perceptual-hash-dhash-threshold-12.md).
 */
export const PERCEPTUAL_HASH_THRESHOLD = 12;

export const NGRAM = 13;

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
  private readonly perceptual: Array<{ hash: bigint; item: EvalItemRef }> = [];
  private readonly byGram = new Map<string, EvalItemRef>();
  private readonly byShortText = new Map<string, EvalItemRef>();
  /** Items indexed, per set name. */
  readonly items: Record<string, number> = {};

  addItem(item: EvalItemRef): void {
    this.items[item.name] = (this.items[item.name] ?? 0) + 1;
  }

  addImage(item: EvalItemRef, sha256: string, dHash: bigint): void {
    if (!this.bySha256.has(sha256)) this.bySha256.set(sha256, item);
    this.perceptual.push({ hash: dHash, item });
  }

  addQuestion(item: EvalItemRef, question: string): void {
    const words = wordsOf(question);
    if (words.length === 0) return;
    if (words.length < NGRAM) {
      if (!this.byShortText.has(words.join(' '))) this.byShortText.set(words.join(' '), item);
      return;
    }
    for (const gram of ngrams(words)) if (!this.byGram.has(gram)) this.byGram.set(gram, item);
  }

  /** The first evaluation item the image is a copy of, if any. */
  matchImage(sha256: string, dHash: bigint): Contamination | undefined {
    const exact = this.bySha256.get(sha256);
    if (exact) return { ...exact, how: 'image: identical bytes (sha256)' };
    let best: { distance: number; item: EvalItemRef } | undefined;
    for (const { hash, item } of this.perceptual) {
      const distance = hammingDistance(hash, dHash);
      if (distance <= PERCEPTUAL_HASH_THRESHOLD && (!best || distance < best.distance)) best = { distance, item };
    }
    return best && { ...best.item, how: `image: perceptual hash ${best.distance} of 64 bits from it (threshold ${PERCEPTUAL_HASH_THRESHOLD})` };
  }

  /** The first evaluation item whose question the text copies (a shared 13-gram, or the whole short question). */
  matchText(text: string): Contamination | undefined {
    const words = wordsOf(text);
    const short = this.byShortText.get(words.join(' '));
    if (short) return { ...short, how: 'instruction: the same text as its question' };
    for (const gram of ngrams(words)) {
      const item = this.byGram.get(gram);
      if (item) return { ...item, how: `instruction: shares the ${NGRAM}-gram "${gram}"` };
    }
    return undefined;
  }
}

/** The rejection reason of a contaminated sample: `contaminated: <name> <index>: <what matched>`. */
export const contaminationReason = (c: Contamination): string => `contaminated: ${c.name} ${c.index}: ${c.how}`;
