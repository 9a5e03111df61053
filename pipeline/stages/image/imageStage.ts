/** Stage 1: read the source image, check it, normalize it to an RGB JPEG and store it by content hash. */
import { dedupePolicy, sourceImageConfig } from '../../../config/sourceConfig.js';
import { normalizeImage } from '../../../image/normalize.js';
import { SampleRejection } from '../../../domain/rejection.js';
import type { SourceSample } from '../../../domain/sample.js';
import { StoreError } from '../../../storage/objectStore.js';
import { SourceError } from '../../../sources/contract.js';
import type { StageContext } from '../../run/context.js';
import { claimOrReject, dedupeKey } from './imageClaims.js';
import { rejectIfContaminated } from '../../decontamination.js';
import { sampleRank } from '../../planning/ranking.js';
import type { ImageResult } from '../../run/stageState.js';

export async function runImageStage(ctx: StageContext, sample: SourceSample): Promise<ImageResult> {
  const reader = ctx.sources[sample.image.sourceIndex];
  if (!reader) throw new Error(`sample ${sample.sampleId}: no source #${sample.image.sourceIndex} in the config`);
  let bytes: Buffer;
  try {
    bytes = await reader.readImage(sample.image);
  } catch (err) {
    const missing = (err instanceof StoreError && err.code !== 'io') || err instanceof SourceError;
    // A symlink leading out of the dataset is refused, not missing: counted apart so it is looked at.
    if (err instanceof StoreError && err.code === 'escapes-root') throw new SampleRejection(`outside-root: ${err.message}`);
    if (missing) throw new SampleRejection(`missing-image: ${(err as Error).message}`);
    throw err;
  }
  const source = ctx.config.sources[sample.image.sourceIndex]!;
  const image = await normalizeImage(bytes, sourceImageConfig(ctx.config.image, source));
  if (!image.ok) throw new SampleRejection(image.reason);
  // Before any claim, store write or model call: a contaminated sample costs nothing further.
  const nearMisses = await rejectIfContaminated(ctx.config, { image: bytes, texts: [sample.originalInstruction] });

  // Duplicates by the source's policy: the lowest rank keeps its sample, the others are rejected naming it.
  const policy = dedupePolicy(source);
  const key = dedupeKey(policy, image.sha256, sample.originalInstruction);
  if (key) {
    const mine = { sampleId: sample.sampleId, rank: sampleRank(ctx.config.seed, sample.sampleId) };
    await claimOrReject(ctx.store, ctx.layout.imageClaim(key), mine, policy, ctx.layout.lostClaim);
  }
  await ctx.store.put(ctx.layout.stagedImage(image.sha256), image.jpeg, 'image/jpeg');
  ctx.memo?.storedImage(sample.sampleId, image.sha256, image.jpeg);
  return {
    sha256: image.sha256,
    origin: reader.origin(sample.image.locator),
    width: image.width,
    height: image.height,
    originalWidth: image.originalWidth,
    originalHeight: image.originalHeight,
    ...(key ? { claim: { key, policy } } : {}),
    ...(nearMisses.length > 0 ? { nearMisses } : {}),
  };
}
