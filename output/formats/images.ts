/**
 * The images a table embeds: the normalized JPEG bytes of records' images, read from the build's
 * staged images by sha256. The shard writer (Parquet at commit) and the exports (TRL) both read them.
 */
import { mapLimit } from '../../domain/mapLimit.js';
import { loadNormalizedImage } from '../../pipeline/run/sampleImage.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import type { InstructRecord } from '../contracts/records.js';

/** The normalized image bytes of the records, by sha256. */
export async function loadImages(store: ObjectStore, layout: BuildLayout, records: readonly Pick<InstructRecord, 'image_sha256'>[]): Promise<Map<string, Buffer>> {
  const images = new Map<string, Buffer>();
  await mapLimit([...new Set(records.map((r) => r.image_sha256))], 16, async (sha) => {
    images.set(sha, await loadNormalizedImage(store, layout, sha));
  });
  return images;
}
