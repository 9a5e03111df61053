/** The per-sample stages of the pipeline, in order (each leaves one stage state per sample). */
export const STAGE_NAMES = ['image', 'instruction', 'constraints', 'answer', 'rejected'] as const;
export type StageName = (typeof STAGE_NAMES)[number];
