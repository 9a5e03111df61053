/**
 * What a build's stages send, for its config fingerprint (pipeline/planning/planBuild.ts): the
 * version of every prompt its stages render (config/stages.ts, domain/promptKinds.ts) and a hash of
 * each as rendered from fixed placeholder inputs. A reworded prompt changes the hash even when its
 * version was not bumped, so a resume after a prompt change is refused like any changed config
 * instead of mixing old-prompt and new-prompt samples under one buildId.
 */
import type { BuildConfig } from '../config/buildConfig.js';
import { STAGES } from '../config/stages.js';
import { CONSTRAINT_TYPES } from '../domain/constraints/catalogue.js';
import { sha256Hex } from '../domain/hashing.js';
import type { PromptKind } from '../domain/promptKinds.js';
import { renderAnswerPrompt } from './answerPrompt.js';
import type { RenderedPrompt } from './chat.js';
import { renderChatQuestionsPrompt } from './chatQuestionsPrompt.js';
import { renderCompareJudgePrompt } from './compareJudgePrompt.js';
import { renderCompatibilityPrompt } from './compatibilityPrompt.js';
import { renderConstraintPrompt } from './constraintPrompt.js';
import { renderDirectJudgePrompt } from './directJudgePrompt.js';
import { renderInstructionPrompt } from './instructionPrompt.js';
import { renderChatTurn } from './multiturnChat.js';
import { renderRefinePrompt } from './refinePrompt.js';
import { renderTagPrompt } from './tagPrompt.js';
import { renderVerifierSelectionPrompt } from './verifierSelectionPrompt.js';

const INSTRUCTION = '<instruction>';
const CONSTRAINTS = [
  { type: '<type 1>', value: '<constraint 1>' },
  { type: '<type 2>', value: '<constraint 2>' },
];

/** Each prompt kind rendered from the same placeholders (the type forces one entry per kind). */
export const PLACEHOLDER_RENDERS: { readonly [K in PromptKind]: () => RenderedPrompt } = {
  instructions: () => renderInstructionPrompt(['<example 1>', '<example 2>'], '<grounding>'),
  refined_instruction: () => renderRefinePrompt('<question>', { answer: '<answer>', grounding: '<grounding>' }),
  chat_questions: () => renderChatQuestionsPrompt(3, '<grounding>'),
  constraints: () => renderConstraintPrompt(INSTRUCTION, CONSTRAINT_TYPES.slice(0, 2)),
  compatibility: () => renderCompatibilityPrompt(INSTRUCTION, CONSTRAINTS),
  verifier_selection: () => renderVerifierSelectionPrompt('<constraint>', [{ name: '<function>', signature: '<signature>', example: '<example>' }]),
  answer: () => renderAnswerPrompt(INSTRUCTION, CONSTRAINTS, '<reference>'),
  direct_judge: () => renderDirectJudgePrompt('<response>', ['<constraint 1>', '<constraint 2>']),
  compare_judge: () => renderCompareJudgePrompt('<constraint>', '<with constraint>', '<without constraint>'),
  chat_answer: () =>
    renderChatTurn(
      [
        { question: '<question 1>', instruction: CONSTRAINTS[0], answer: '<answer 1>' },
        { question: '<question 2>', instruction: CONSTRAINTS[1] },
      ],
      1,
    ),
  image_tags: () => renderTagPrompt(),
};

/** The prompts a build sends: those of its mode's stages, and the tagging prompt when a source selects images by VLM tags. */
function promptsOf(config: BuildConfig): PromptKind[] {
  const kinds = new Set<PromptKind>(STAGES[config.mode].flatMap((s) => s.prompts));
  if (config.sources.some((s) => s.richness?.scorer === 'vlm-tags')) kinds.add('image_tags');
  return [...kinds].sort();
}

/** Per prompt the build sends: its version and the sha256 of its placeholder rendering. */
export type PromptMaterial = Record<string, { version: string; sha256: string }>;

/** `renders`: the prompts as this code renders them; a test passes reworded ones. */
export function promptMaterial(config: BuildConfig, renders: typeof PLACEHOLDER_RENDERS = PLACEHOLDER_RENDERS): PromptMaterial {
  return Object.fromEntries(
    promptsOf(config).map((kind) => {
      const { version, messages } = renders[kind]();
      return [kind, { version, sha256: sha256Hex(JSON.stringify(messages)) }];
    }),
  );
}

/** The prompts whose version or text differ between two materials, by kind. */
export function changedPrompts(before: PromptMaterial, now: PromptMaterial): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(now)])].filter((kind) => JSON.stringify(before[kind]) !== JSON.stringify(now[kind])).sort();
}
