/** The image stage's code: read, check, normalize and store the sample's image, and claim its dedupe key (imageStage.ts). */
import type { StageCode } from '../stageDefinition.js';
import { runImageStage } from './imageStage.js';

export const imageCode: StageCode<'image'> = {
  run: (ctx, sample) => runImageStage(ctx, sample),
};
