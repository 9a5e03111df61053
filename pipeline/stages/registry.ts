/**
 * The stage registry: each stage's descriptor (config/stages.ts, in the order a build of each mode
 * runs them) joined with its run code (pipeline/stages/<stage>/definition.ts). Adding a stage: its
 * descriptor and its place in a mode's list, its folder here with its code, its entry below (the
 * type names a missing one) and its result type in pipeline/run/stageState.ts.
 */
import type { BuildMode } from '../../config/buildConfig.js';
import { STAGES, type StageKey, type StageName } from '../../config/stages.js';
import { answerCode } from './answer/definition.js';
import { chatCode } from './chat/definition.js';
import { constraintsCode } from './constraints/definition.js';
import { imageCode } from './image/definition.js';
import { instructionCode } from './instruction/definition.js';
import { questionsCode } from './questions/definition.js';
import { rejectedCode } from './rejected/definition.js';
import type { StageCode, StageDefinition } from './stageDefinition.js';

const CODE: { readonly [K in StageKey]: StageCode<K> } = {
  image: imageCode,
  instruction: instructionCode,
  questions: questionsCode,
  constraints: constraintsCode,
  answer: answerCode,
  rejected: rejectedCode,
  chat: chatCode,
};

const withCode = (stages: (typeof STAGES)[BuildMode]): readonly StageDefinition[] => stages.map((descriptor) => ({ ...descriptor, ...CODE[descriptor.key] }) as StageDefinition);
const DEFINITIONS: Record<BuildMode, readonly StageDefinition[]> = { single: withCode(STAGES.single), multiturn: withCode(STAGES.multiturn) };

/** A build mode's stages in the order they run, each with its code. */
export function stageDefinitions(mode: BuildMode): readonly StageDefinition[] {
  return DEFINITIONS[mode];
}

/** The definition of stage `name` in a build of `mode`; an error for a stage the mode does not run. */
export function stageDefinition(mode: BuildMode, name: StageName): StageDefinition {
  const definition = stageDefinitions(mode).find((d) => d.name === name);
  if (!definition) throw new Error(`stage '${name}' is not a stage of a ${mode === 'single' ? 'single-turn' : 'multiturn'} build (${STAGES[mode].map((s) => s.name).join(', ')})`);
  return definition;
}
