/** The image step: read, check, normalize and store the sample's image, and claim its dedupe key (pipeline/stages/image/imageStage.ts). */
import { runImageStage } from './imageStage.js';
import type { StageDefinition } from '../stageDefinition.js';

export const imageStep: StageDefinition<'image'> = {
  name: 'image',
  summary: 'the source image read, checked, normalized to an RGB JPEG and stored by content hash; its dedupe claim',
  buildsOn: [],
  modelRoles: [],
  prompts: [],
  run: (ctx, sample) => runImageStage(ctx, sample),
};
