/**
 * The pipeline steps' names and their order per build mode: what workflow code may import. Each step
 * is defined in pipeline/stages/<step>/definition.ts and listed in pipeline/stages/registry.ts, which workflow
 * code cannot import; test/unit/stageRegistry.test.ts keeps the two equal.
 *
 * The per-sample stages of a single-turn build, in order (each leaves one stage state per sample).
 */
export const STAGE_NAMES = ['image', 'instruction', 'constraints', 'answer', 'rejected'] as const;

/**
 * A multiturn build's stages (seed 002 chats): its instruction stage writes the chat's questions, its
 * constraint stage the rule-checked candidates for global instructions, and the chat stage every
 * answer of the chat with its turn-level pairs.
 */
export const MULTITURN_STAGE_NAMES = ['image', 'instruction', 'constraints', 'chat'] as const;

export type StageName = (typeof STAGE_NAMES)[number] | (typeof MULTITURN_STAGE_NAMES)[number];

/** Every stage a sample can have a state for, whatever the build's mode. */
export const ALL_STAGE_NAMES: readonly StageName[] = [...STAGE_NAMES, 'chat'];

/** The stages a build of this mode runs, in order. */
export function stagesFor(mode: 'single' | 'multiturn'): readonly StageName[] {
  return mode === 'multiturn' ? MULTITURN_STAGE_NAMES : STAGE_NAMES;
}
