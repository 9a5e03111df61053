/**
 * The seeded choices around constraints: which types the model is offered, how an over-long list
 * is trimmed, and which constraints the rejected (DPO) answer is generated without.
 */
import { CONSTRAINT_TYPES, constraintType, type ConstraintType, type InstructionKind } from './catalogue.js';
import { typeSuitableFor } from './compatibility.js';
import { sampleK, type Rng } from '../random.js';

export interface Constraint {
  type: string;
  value: string;
}

/**
 * The types offered to the model: a seeded sample of those the kind of instruction can carry,
 * within the source's own subset when it has one.
 */
export function offeredConstraintTypes(rng: Rng, count: number, kind: InstructionKind, allowed?: readonly string[]): ConstraintType[] {
  const candidates = CONSTRAINT_TYPES.filter((t) => typeSuitableFor(t.key, kind) && (!allowed || allowed.includes(t.key)));
  return sampleK(rng, candidates, count);
}

type ConstraintListVerdict = { ok: true; constraints: Constraint[]; trimmed: Constraint[] } | { ok: false; reason: string };

/**
 * Cleans the model's constraint list: unknown types, types not offered, empty values and repeated
 * types are removed (the paper uses each type at most once per sample); then the list is trimmed
 * to `max` at random and refused when fewer than `min` remain. A refusal counts what was dropped and
 * why, so a reject tells a model that ignores the offered types from one that repeats them.
 */
export function finalizeConstraints(rng: Rng, proposed: readonly Constraint[], offered: readonly string[], limits: { min: number; max: number }): ConstraintListVerdict {
  const allowed = new Set(offered);
  const seen = new Set<string>();
  const valid: Constraint[] = [];
  const dropped = { 'not offered': 0, empty: 0, repeated: 0 };
  for (const c of proposed) {
    const value = c.value.trim();
    if (!constraintType(c.type) || !allowed.has(c.type)) dropped['not offered']++;
    else if (!value) dropped.empty++;
    else if (seen.has(c.type)) dropped.repeated++;
    else {
      seen.add(c.type);
      valid.push({ type: c.type, value });
    }
  }
  if (valid.length < limits.min) {
    const why = Object.entries(dropped).flatMap(([cause, n]) => (n > 0 ? [`${n} ${cause}`] : []));
    const causes = why.length > 0 ? ` (${why.join(', ')})` : '';
    return { ok: false, reason: `too-few-constraints: ${valid.length} usable of ${proposed.length} proposed${causes}, at least ${limits.min} required` };
  }
  const kept = sampleK(rng, valid, limits.max);
  return { ok: true, constraints: kept, trimmed: valid.filter((c) => !kept.includes(c)) };
}

/** Splits constraints for the rejected answer: ceil(n * fraction) are dropped, chosen at random (the epsilon keeps 6 * (1/3) at 2, not 3). */
export function dropConstraints<C extends Constraint>(rng: Rng, constraints: readonly C[], fraction: number): { kept: C[]; dropped: C[] } {
  const dropCount = Math.min(constraints.length, Math.ceil(constraints.length * fraction - 1e-9));
  const dropped = sampleK(rng, constraints, dropCount);
  return { kept: constraints.filter((c) => !dropped.includes(c)), dropped };
}
