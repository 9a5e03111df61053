/**
 * The seeded shape of one multi-turn chat (MMMT-IF, seed 002): at which question turns a global
 * instruction is added, which instructions they are, and which earlier instruction a turn's rejected
 * answer is generated without.
 *
 * A global instruction constrains every later answer, so two instructions of one chat must be
 * compatible even when they are added twenty turns apart: the catalogue's conflict rules run over the
 * whole chat's list, not per turn. Only rule-checked instructions are used, because PIF is defined on
 * instructions whose verdict is computed by code.
 */
import { removeConflicts, type CheckedConstraint } from '../constraints/compatibility.js';
import { pickOne, type Rng } from '../random.js';
import type { VerificationMethod } from '../verdict.js';

import { MAX_CHAT_INSTRUCTIONS, MAX_CHAT_TURNS } from './limits.js';

export type ChatCandidate = CheckedConstraint & { method: VerificationMethod };

export interface ChatInstruction<C extends ChatCandidate> {
  /** 1-based question turn at which the instruction is added (it binds this turn and every later one). */
  turn: number;
  constraint: C;
}

export interface ChatInstructions<C extends ChatCandidate> {
  instructions: Array<ChatInstruction<C>>;
  /** Candidates refused, each with the reason; none disappears silently. */
  removed: Array<{ constraint: C; reason: string }>;
  /** Usable candidates beyond the chat's instruction turns. */
  spare: C[];
}

/**
 * The turns that add an instruction, as seed 002 draws them (§1): "Before each question, with
 * probability 1 − (# Instruction given so far)/6 another instruction is added" (6 being its per-chat
 * maximum; §2.1 calls this "inversely proportional to the number of instructions already provided").
 * With `maxInstructions` = M the chance before a question is 1 − k/M after k instructions: the first
 * question always gets one (so every chat has one), and none comes after the M-th. Ascending.
 */
export function instructionTurns(rng: Rng, turns: number, maxInstructions: number): number[] {
  if (!Number.isInteger(turns) || turns < 1 || turns > MAX_CHAT_TURNS) {
    throw new Error(`chat plan: turns must be an integer in 1..${MAX_CHAT_TURNS}, got ${turns}`);
  }
  if (!Number.isInteger(maxInstructions) || maxInstructions < 1 || maxInstructions > MAX_CHAT_INSTRUCTIONS) {
    throw new Error(`chat plan: instructions per chat must be an integer in 1..${MAX_CHAT_INSTRUCTIONS}, got ${maxInstructions}`);
  }
  const at: number[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    if (rng() < 1 - at.length / maxInstructions) at.push(turn);
  }
  return at;
}

/**
 * Assigns candidates, in their order, to the instruction turns: judged candidates are refused, then
 * the catalogue's conflicts are removed across the whole chat (the later candidate gives way) and a
 * type is used once per chat. When fewer candidates survive than there are turns, the earliest turns
 * get them.
 */
export function assignInstructions<C extends ChatCandidate>(turns: readonly number[], candidates: readonly C[]): ChatInstructions<C> {
  const removed: Array<{ constraint: C; reason: string }> = [];
  const checkable: C[] = [];
  const types = new Set<string>();
  for (const c of candidates) {
    if (c.method !== 'rule' || !c.verifiers?.length) {
      removed.push({ constraint: c, reason: `not rule-checked: ${c.type} is verified by ${c.method}, and PIF needs a verdict computed by code` });
    } else if (types.has(c.type)) {
      removed.push({ constraint: c, reason: `repeated type: ${c.type} is already an instruction of this chat` });
    } else {
      types.add(c.type);
      checkable.push(c);
    }
  }
  // Global instructions accumulate: an answer late in the chat is bound by all of them at once, like
  // the constraints of one single-turn sample, whatever the instruction's own wording.
  const compatible = removeConflicts(checkable, 'open');
  removed.push(...compatible.removed);
  const used = compatible.kept.slice(0, turns.length);
  return {
    instructions: used.map((constraint, i) => ({ turn: turns[i]!, constraint })),
    removed,
    spare: compatible.kept.slice(turns.length),
  };
}

/** The instructions a turn's answer must follow: every one added at or before it, in the order given. */
export function instructionsInForce<C extends ChatCandidate>(instructions: ReadonlyArray<ChatInstruction<C>>, turn: number): Array<ChatInstruction<C>> {
  return instructions.filter((i) => i.turn <= turn);
}

/**
 * The instruction a turn's rejected answer is generated without: a seeded pick among those added at an
 * EARLIER turn, since forgetting an instruction given turns ago is the retrieval failure seed 002
 * measures. Undefined when no earlier instruction exists (no pair for that turn).
 */
export function droppedForRejected<C extends ChatCandidate>(rng: Rng, instructions: ReadonlyArray<ChatInstruction<C>>, turn: number): ChatInstruction<C> | undefined {
  const earlier = instructions.filter((i) => i.turn < turn);
  return earlier.length === 0 ? undefined : pickOne(rng, earlier);
}
