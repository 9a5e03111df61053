/**
 * Duplicate samples of a build, by the source's dedupe policy (config/sourceFields.ts): each
 * dedupe key is claimed by one sample, recorded with its rank in the seeded order. The lowest rank
 * keeps the key whichever worker gets there first: a lower rank takes over a claim held by a higher
 * one, and a shard's commit drops a sample whose claim was taken over since (output/commit/shardWriter.ts).
 * A shard that committed before the lower rank took its claim over is named by a mark left before
 * the takeover (`lostClaim`), and committed again without that sample before the build counts its
 * records (output/commit/lateDuplicates.ts): the kept sample never depends on which shard ran first.
 */
import type { DedupePolicy } from '../../../config/sourceFields.js';
import { sha256Hex } from '../../../domain/hashing.js';
import { SampleRejection } from '../../../domain/rejection.js';
import { getJson, type ObjectStore } from '../../../storage/objectStore.js';

interface ImageClaim {
  sampleId: string;
  rank: string;
}

/** The mark a takeover leaves (`_work/image-claims-lost/<sample id>.json`): this sample lost `key` to `keptBy`. */
export interface LostClaim {
  sampleId: string;
  key: string;
  keptBy: string;
}

/**
 * The key two duplicate samples share, or undefined when the policy dedupes nothing. Questions are
 * compared case- and whitespace-insensitively: "What is  X?" and "what is x?" ask the same thing.
 */
export function dedupeKey(policy: DedupePolicy, imageSha256: string, question: string | undefined): string | undefined {
  if (policy === 'none') return undefined;
  if (policy === 'image') return imageSha256;
  const normalized = (question ?? '').trim().replace(/\s+/g, ' ').toLowerCase();
  return `${imageSha256}-q${sha256Hex(normalized).slice(0, 16)}`;
}

/** The rejection reason of a duplicate, naming the kept sample. */
export function duplicateReason(policy: DedupePolicy, keptSampleId: string): string {
  return policy === 'image+question' ? `duplicate-question: same image and question as sample ${keptSampleId}` : `duplicate-image: same image as sample ${keptSampleId}`;
}

/** Who keeps a key: the lower rank (sample ids break a tie, which only a hash collision could cause). */
function keeps(a: ImageClaim, b: ImageClaim): ImageClaim {
  if (a.rank !== b.rank) return a.rank < b.rank ? a : b;
  return a.sampleId <= b.sampleId ? a : b;
}

/** The sample holding a claim now, if any. */
export async function claimHolder(store: ObjectStore, claimKey: string): Promise<ImageClaim | undefined> {
  return getJson<ImageClaim>(store, claimKey);
}

/**
 * Claims `claimKey` for `mine`, or throws the duplicate rejection naming the kept sample. Taking over
 * is re-checked after the write: of two lower ranks racing for one claim, the lowest stays.
 */
export async function claimOrReject(
  store: ObjectStore,
  claimKey: string,
  mine: ImageClaim,
  policy: DedupePolicy,
  /** Where the mark of a holder that loses its claim goes (BuildLayout.lostClaim). */
  lostClaimKey: (sampleId: string) => string,
): Promise<void> {
  const body = () => JSON.stringify(mine);
  if (await store.putIfAbsent(claimKey, body(), 'application/json')) return;
  for (let attempt = 0; attempt < 3; attempt++) {
    const holder = await claimHolder(store, claimKey);
    if (!holder || holder.sampleId === mine.sampleId) return;
    const kept = keeps(holder, mine);
    if (kept !== mine) throw new SampleRejection(duplicateReason(policy, holder.sampleId));
    // Marked before the takeover: a crash between the two leaves a mark the retry confirms, never a
    // takeover without one. The holder's shard may have committed already; the mark names it.
    const lost: LostClaim = { sampleId: holder.sampleId, key: claimKey, keptBy: mine.sampleId };
    await store.put(lostClaimKey(holder.sampleId), JSON.stringify(lost), 'application/json');
    await store.put(claimKey, body(), 'application/json');
  }
}
