/**
 * One simulator instance's vision-encoder cache, as a vLLM replica keeps one (its encoder cache and
 * multimodal processor cache: vllm/v1/core/encoder_cache_manager.py): an image is encoded the first
 * time this instance sees it and reused after, keyed by the id the request gives (vLLM's `uuid`,
 * llm/imageIds.ts) or else by the hash of its bytes. Each instance (each replica) has its own, so a
 * sample whose requests a balancer spreads over N replicas is encoded up to N times. Counted for the
 * benchmarks: encodings, hits, images sent with an id, and ids sent with other bytes than the first
 * time (a server trusting the id would serve the wrong encoding: the engine must never cause one).
 */
import { createHash } from 'node:crypto';
import { imageIdOfPart } from '../llm/imageIds.js';

export interface VisionStats {
  /** Images run through the encoder (a miss). */
  encodings: number;
  /** Images found encoded already. */
  hits: number;
  /** Image parts that carried an id. */
  withId: number;
  /** Ids seen again with different bytes. */
  idConflicts: number;
}

export const emptyVisionStats = (): VisionStats => ({ encodings: 0, hits: 0, withId: 0, idConflicts: 0 });

export class VisionCache {
  /** Cache key (the id, else the bytes' hash) -> the bytes' hash. */
  private readonly encoded = new Map<string, string>();

  constructor(private readonly maxEntries = 1_000_000) {}

  /** Whether this image part needs the encoder here; then it is cached. Counts into `stats`. */
  encode(part: { image_url: { url: string } }, stats: VisionStats): boolean {
    const bytes = createHash('sha256').update(part.image_url.url).digest('base64');
    const id = imageIdOfPart(part);
    if (id !== undefined) stats.withId++;
    const key = id === undefined ? `bytes:${bytes}` : `id:${id}`;
    const held = this.encoded.get(key);
    if (held !== undefined) {
      stats.hits++;
      if (held !== bytes) stats.idConflicts++;
      return false;
    }
    if (this.encoded.size >= this.maxEntries) this.encoded.clear();
    this.encoded.set(key, bytes);
    stats.encodings++;
    return true;
  }
}
