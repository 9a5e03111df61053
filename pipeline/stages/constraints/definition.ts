/**
 * The constraints step: constraints integrated (Fig. 15) from a seeded subset of the catalogue,
 * filtered by rules and the model's compatibility pass, each with its verification planned (the
 * phrase parser, or Fig. 20 verifier selection) (pipeline/stages/constraints/constraintStage.ts).
 */
import { COMPATIBILITY_PROMPT_VERSION } from '../../../prompts/compatibilityPrompt.js';
import { CONSTRAINT_PROMPT_VERSION } from '../../../prompts/constraintPrompt.js';
import { VERIFIER_SELECTION_PROMPT_VERSION } from '../../../prompts/verifierSelectionPrompt.js';
import { constraintRequest, runConstraintStage } from './constraintStage.js';
import { priorImage, type StageDefinition } from '../stageDefinition.js';

export const constraintsStep: StageDefinition<'constraints'> = {
  name: 'constraints',
  summary: 'the constraints (Fig. 15), filtered for compatibility, each with how it will be verified',
  buildsOn: ['image', 'instruction'],
  modelRoles: ['constraints', 'compatibility', 'verifier'],
  prompts: [CONSTRAINT_PROMPT_VERSION, COMPATIBILITY_PROMPT_VERSION, VERIFIER_SELECTION_PROMPT_VERSION],
  run: async (ctx, sample, prior, calls) => runConstraintStage(ctx, sample, prior.instruction!.instruction, await priorImage(ctx, prior), calls),
  firstRequest: async (ctx, sample, prior) => constraintRequest(ctx, sample, prior.instruction!.instruction, await priorImage(ctx, prior)),
};
