/** Stage 1: read the source image, check it, normalize it to an RGB JPEG and store it by content hash. */
import { sourceImageConfig } from '../config/sourceConfig.js';
import { normalizeImage } from '../image/normalize.js';
import { SampleRejection } from '../domain/rejection.js';
import type { SourceSample } from '../domain/sample.js';
import { StoreError, getJson } from '../storage/objectStore.js';
import { SourceError } from '../sources/source.js';
import type { StageContext } from './context.js';
import type { ImageResult } from './stageState.js';

export async function runImageStage(ctx: StageContext, sample: SourceSample): Promise<ImageResult> {
  const reader = ctx.sources[sample.image.sourceIndex];
  if (!reader) throw new Error(`sample ${sample.sampleId}: no source #${sample.image.sourceIndex} in the config`);
  let bytes: Buffer;
  try {
    bytes = await reader.readImage(sample.image);
  } catch (err) {
    const missing = (err instanceof StoreError && err.code !== 'io') || err instanceof SourceError;
    if (missing) throw new SampleRejection(`missing-image: ${(err as Error).message}`);
    throw err;
  }
  const image = await normalizeImage(bytes, sourceImageConfig(ctx.config.image, ctx.config.sources[sample.image.sourceIndex]!));
  if (!image.ok) throw new SampleRejection(image.reason);

  // The first sample to claim a content hash owns it; later duplicates in the build are dropped.
  // A claim survives retries and re-runs, so the owner never changes once chosen.
  const claimKey = ctx.layout.imageClaim(image.sha256);
  const claimed = await ctx.store.putIfAbsent(claimKey, JSON.stringify({ sampleId: sample.sampleId }), 'application/json');
  if (!claimed) {
    const owner = (await getJson<{ sampleId: string }>(ctx.store, claimKey))?.sampleId;
    if (owner !== sample.sampleId) throw new SampleRejection(`duplicate-image: same image as sample ${owner}`);
  }
  await ctx.store.put(ctx.layout.image(image.sha256), image.jpeg, 'image/jpeg');
  return {
    sha256: image.sha256,
    width: image.width,
    height: image.height,
    originalWidth: image.originalWidth,
    originalHeight: image.originalHeight,
  };
}
