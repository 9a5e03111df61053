/**
 * The constraints stage's code: constraints integrated (Fig. 15) from a seeded subset of the
 * catalogue, filtered by rules and the model's compatibility pass, each with its verification
 * planned (the phrase parser, or Fig. 20 verifier selection) (constraintStage.ts).
 */
import { priorImage, type StageCode } from '../stageDefinition.js';
import { constraintRequest, runConstraintStage } from './constraintStage.js';

export const constraintsCode: StageCode<'constraints'> = {
  run: async (ctx, sample, prior, calls) => runConstraintStage(ctx, sample, prior.instruction!.instruction, await priorImage(ctx, sample, prior), calls),
  firstRequest: async (ctx, sample, prior) => constraintRequest(ctx, sample, prior.instruction!.instruction, await priorImage(ctx, sample, prior)),
};
