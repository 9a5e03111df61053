import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSTRAINT_TYPES } from '../../domain/constraints/catalogue.js';
import { dropConstraints, finalizeConstraints, offeredConstraintTypes, type Constraint } from '../../domain/constraints/selection.js';
import { rngFor } from '../../domain/random.js';
import { resolveFunction } from '../../verification/functions.js';

const constraints = (n: number): Constraint[] => CONSTRAINT_TYPES.slice(0, n).map((t) => ({ type: t.key, value: `follow ${t.key}` }));

test('the catalogue has the 32 subtypes of Table 5 in 6 categories, with unique keys', () => {
  assert.equal(CONSTRAINT_TYPES.length, 32);
  assert.equal(new Set(CONSTRAINT_TYPES.map((t) => t.key)).size, 32);
  assert.equal(new Set(CONSTRAINT_TYPES.map((t) => t.category)).size, 6);
  for (const key of ['paragraph_number_limit', 'not_mention', 'prefix_and_suffix', 'unstrict_formatting_requirements']) {
    assert.ok(
      CONSTRAINT_TYPES.some((t) => t.key === key),
      key,
    );
  }
});

test('offered types are seeded: same seed, same types; another seed, other types', () => {
  const a = offeredConstraintTypes(rngFor(1, 'sample-a', 'offered'), 12, 'open').map((t) => t.key);
  const again = offeredConstraintTypes(rngFor(1, 'sample-a', 'offered'), 12, 'open').map((t) => t.key);
  const other = offeredConstraintTypes(rngFor(2, 'sample-a', 'offered'), 12, 'open').map((t) => t.key);
  assert.deepEqual(a, again);
  assert.equal(new Set(a).size, 12);
  assert.notDeepEqual(a, other);
  // A short question is never offered paragraph counts or word ranges.
  const short = offeredConstraintTypes(rngFor(1, 'sample-a', 'offered'), 32, 'short_answer').map((t) => t.key);
  assert.ok(!short.includes('paragraph_number_limit') && !short.includes('word_count_range_limit'));
  assert.ok(short.includes('tone_requirement'));
});

test('dropping removes ceil(n/3) constraints, seeded, and keeps the rest in order', () => {
  for (let n = 3; n <= 12; n++) {
    const all = constraints(n);
    const { kept, dropped } = dropConstraints(rngFor(7, 's', 'drop'), all, 1 / 3);
    assert.equal(dropped.length, Math.ceil(n / 3), `n=${n}`);
    assert.equal(kept.length + dropped.length, n);
    assert.deepEqual(
      kept,
      all.filter((c) => !dropped.includes(c)),
    );
    assert.deepEqual(dropConstraints(rngFor(7, 's', 'drop'), all, 1 / 3).dropped, dropped);
  }
  assert.equal(dropConstraints(rngFor(7, 's', 'drop'), constraints(6), 1).kept.length, 0);
});

test('finalize drops unknown, unoffered, empty and repeated types, then enforces min and max', () => {
  const offered = CONSTRAINT_TYPES.slice(0, 14).map((t) => t.key);
  const proposed: Constraint[] = [
    ...constraints(4),
    { type: 'made_up_type', value: 'x' },
    { type: CONSTRAINT_TYPES[20]!.key, value: 'not offered' },
    { type: CONSTRAINT_TYPES[0]!.key, value: 'a repeat' },
    { type: CONSTRAINT_TYPES[5]!.key, value: '   ' },
  ];
  const result = finalizeConstraints(rngFor(1), proposed, offered, { min: 3, max: 12 });
  assert.ok(result.ok);
  assert.deepEqual(result.constraints, constraints(4));

  const trimmed = finalizeConstraints(rngFor(1), constraints(14), offered, { min: 3, max: 12 });
  assert.ok(trimmed.ok);
  assert.equal(trimmed.constraints.length, 12);
  assert.equal(trimmed.trimmed.length, 2);

  const tooFew = finalizeConstraints(rngFor(1), constraints(2), offered, { min: 3, max: 12 });
  assert.deepEqual(tooFew, { ok: false, reason: 'too-few-constraints: 2 usable of 2 proposed, at least 3 required' });
  // A refusal says what was dropped and why.
  const dropped = finalizeConstraints(rngFor(1), [...constraints(2), ...proposed.slice(-3)], offered, { min: 3, max: 12 });
  assert.deepEqual(dropped, { ok: false, reason: 'too-few-constraints: 2 usable of 5 proposed (1 not offered, 1 empty, 1 repeated), at least 3 required' });
});

test('every verifier a type names is a canonical registry function', () => {
  for (const t of CONSTRAINT_TYPES) {
    for (const name of t.verifiers) assert.equal(resolveFunction(name)?.name, name, `${t.key}: ${name}`);
  }
});
