/**
 * The stage registry: every pipeline step's definition (pipeline/stages/<step>/definition.ts), in the order a
 * build of each mode runs them. Adding a step: its definition file, its entry here, and its name in
 * domain/stages.ts (the names and order workflow code may import; it cannot import this module,
 * which reaches model calls and storage) with its result type in stageState.ts; the unit test
 * test/unit/stageRegistry.test.ts names whatever is missing.
 */
import { stagesFor, type StageName } from '../../domain/stages.js';
import { answerStep } from './answer/definition.js';
import { chatStep } from './chat/definition.js';
import { constraintsStep } from './constraints/definition.js';
import type { StageDefinition } from './stageDefinition.js';
import { imageStep } from './image/definition.js';
import { instructionStep } from './instruction/definition.js';
import { questionsStep } from './questions/definition.js';
import { rejectedStep } from './rejected/definition.js';

export type BuildMode = 'single' | 'multiturn';
type Registry = { readonly [S in StageName]?: StageDefinition<S> };

const REGISTRY: Record<BuildMode, Registry> = {
  single: { image: imageStep, instruction: instructionStep, constraints: constraintsStep, answer: answerStep, rejected: rejectedStep },
  multiturn: { image: imageStep, instruction: questionsStep, constraints: constraintsStep, chat: chatStep },
};

/** The definition of step `name` in a build of `mode`; an error for a step the mode does not run. */
export function stageDefinition<S extends StageName>(mode: BuildMode, name: S): StageDefinition<S> {
  const definition = REGISTRY[mode][name] as StageDefinition<S> | undefined;
  if (!definition) throw new Error(`stage '${name}' is not a step of a ${mode === 'single' ? 'single-turn' : 'multiturn'} build (${stagesFor(mode).join(', ')})`);
  return definition;
}

/** A build mode's steps in the order they run (domain/stages.ts's order). */
export function stageDefinitions(mode: BuildMode): StageDefinition[] {
  return stagesFor(mode).map((name) => stageDefinition(mode, name) as StageDefinition);
}
