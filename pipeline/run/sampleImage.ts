/**
 * The normalized image the model stages send, loaded from where the image stage stored it: one
 * reader, so every stage sends the same bytes under the same hash; read once per slice execution
 * (sliceMemo.ts).
 */
import type { BuildLayout } from '../../storage/buildLayout.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import type { StageContext } from './context.js';
import type { ImageResult } from './stageState.js';

/** The normalized JPEG a model stage sends, as stored by the image stage. */
export interface SampleImage {
  jpeg: Buffer;
  sha256: string;
}

export async function loadSampleImage(ctx: StageContext, sampleId: string, image: ImageResult): Promise<SampleImage> {
  const read = () => loadNormalizedImage(ctx.store, ctx.layout, image.sha256);
  return { jpeg: await (ctx.memo ? ctx.memo.image(sampleId, image.sha256, read) : read()), sha256: image.sha256 };
}

/**
 * A normalized image where the image stage stored it (_work/images/), or, for a build whose image
 * stage ran before images were staged, where it stored them then (images/).
 */
export async function loadNormalizedImage(store: ObjectStore, layout: BuildLayout, sha256: string): Promise<Buffer> {
  const jpeg = (await store.get(layout.stagedImage(sha256))) ?? (await store.get(layout.image(sha256)));
  if (!jpeg) throw new Error(`normalized image ${sha256} is missing from ${store.root}`);
  return jpeg;
}
