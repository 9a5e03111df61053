/**
 * RICO unique UIs (interactionmining.org): app screenshots with their view hierarchies, whose
 * visible text is the grounding of generated instructions. The reader is reader.ts.
 */
import { SCREEN_CONSTRAINTS, layoutField } from '../../config/sourceFields.js';
import { defineSource } from '../definition.js';

export const ricoDefinition = defineSource({
  type: 'rico',
  fields: {
    /** `release`: `combined/` screenshots and hierarchies; `hub`: RICO-Screen2Words Parquet; 'auto' detects. */
    layout: layoutField(['release', 'hub']),
  },
  defaults: {
    dedupe: 'image',
    licenseNote: 'RICO: CC BY 4.0 (interactionmining.org)',
    image: { maxAspectRatio: 4 },
    constraintTypes: SCREEN_CONSTRAINTS,
  },
  docs: {
    layout:
      "`combined/<N>.jpg` (the release's screenshots; any other format the image stage handles, PNG, WebP, GIF, TIFF or AVIF, is listed too, and BMP is rejected there as `unsupported-format: bmp`, never skipped) with `combined/<N>.json` view hierarchies (visible `text` and `content-desc` labels, e.g. `Navigate up` on icon-only buttons, become grounding for instruction generation, ≤ 2,000 chars); `semantic_annotations/` wireframes are never read, and a `uri` pointing at that folder is refused; or `rootsautomation/RICO-Screen2Words` Parquet, `data/{split}-*.parquet` (`screenId`, `image: Image`, `view_hierarchy` as a JSON string giving the same grounding; `image_icon`/`image_semantic` never read)",
    instruction: 'generated, with the screen text',
    hub: ['interactionmining.org RICO (unique UIs, `combined/`)', 'rootsautomation/RICO-Screen2Words'],
  },
});
