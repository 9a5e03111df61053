import type { StageContext } from './context.js';
import type { ImageResult } from './stageState.js';

/** The normalized JPEG a model stage sends, as stored by the image stage. */
export interface SampleImage {
  jpeg: Buffer;
  sha256: string;
}

export async function loadSampleImage(ctx: StageContext, image: ImageResult): Promise<SampleImage> {
  const jpeg = await ctx.store.get(ctx.layout.image(image.sha256));
  if (!jpeg) throw new Error(`normalized image ${image.sha256} is missing from ${ctx.store.root}`);
  return { jpeg, sha256: image.sha256 };
}
