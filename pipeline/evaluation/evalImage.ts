/**
 * The image an eval sends with a question: read from the dataset root and normalized to the JPEG the
 * model calls expect, with only the decoding guards (an eval scores every sample it is given).
 */
import { imageSchema } from '../../config/imageConfig.js';
import { sha256Hex } from '../../domain/hashing.js';
import { SampleRejection } from '../../domain/rejection.js';
import { normalizeImage } from '../../image/normalize.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import type { SampleImage } from '../run/sampleImage.js';
import { EvalInputError } from './evalContext.js';

/** Only decoding guards: an eval image is judged by the model, not filtered like a build's. */
const LENIENT = imageSchema.parse({ minShortSide: 1, maxAspectRatio: 1000, minChannelStdDev: 0 });

/**
 * The image of a sample or chat, from the dataset root, as the JPEG the model calls send: a build's
 * normalized images as they are; anything else (a chat file's PNG, say) normalized first.
 */
export async function loadEvalImage(data: ObjectStore, owner: string, path: string): Promise<SampleImage> {
  const bytes = await data.get(path);
  if (!bytes) throw new EvalInputError(`${owner}: image ${data.root.replace(/\/+$/, '')}/${path} is missing`);
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { jpeg: bytes, sha256: sha256Hex(bytes) };
  const normalized = await normalizeImage(bytes, LENIENT);
  if (!normalized.ok) throw new SampleRejection(`image ${path}: ${normalized.reason}`);
  return { jpeg: normalized.jpeg, sha256: normalized.sha256 };
}
