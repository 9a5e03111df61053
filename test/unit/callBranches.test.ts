/**
 * callBranches: a sample's independent calls sent together keep a stage state's calls in branch order
 * whatever the replies' timing, and record what every branch paid for even when one of them failed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callBranches } from '../../pipeline/run/callBranches.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { SampleRejection } from '../../domain/rejection.js';

const call = (model: string) => ({ stage: 'judge', model }) as CallRecord;

const started: string[] = [];

/** A branch that notes its start, records `model` once `gate` opens, and returns `value` (or throws it, an Error). */
function branch<T>(model: string, gate: Promise<void>, value: T) {
  return async (calls: CallRecord[]) => {
    started.push(model);
    await gate;
    calls.push(call(model));
    if (value instanceof Error) throw value;
    return value;
  };
}

function gates(n: number) {
  const opens: Array<() => void> = [];
  const all = Array.from({ length: n }, () => new Promise<void>((resolve) => opens.push(resolve)));
  return { all, open: (i: number) => opens[i]!() };
}

test('all branches are in flight at once; results and calls come in branch order, not in the order they end', async () => {
  const g = gates(3);
  const calls: CallRecord[] = [call('earlier')];
  started.length = 0;
  const running = callBranches<[string, number, boolean]>(calls, [branch('a', g.all[0]!, 'x'), branch('b', g.all[1]!, 7), branch('c', g.all[2]!, true)]);
  // Every branch started while the first one still waits on its reply.
  assert.deepEqual(started, ['a', 'b', 'c']);
  g.open(2);
  g.open(1);
  g.open(0);
  assert.deepEqual(await running, ['x', 7, true]);
  assert.deepEqual(
    calls.map((c) => c.model),
    ['earlier', 'a', 'b', 'c'],
  );
});

test('a failed branch is thrown once every branch has settled, and the calls the others paid for are recorded', async () => {
  const g = gates(3);
  const calls: CallRecord[] = [];
  const running = callBranches<[string, string, string]>(calls, [
    branch('a', g.all[0]!, 'x'),
    branch('b', g.all[1]!, new SampleRejection('answer: judge unusable') as unknown as string),
    branch('c', g.all[2]!, 'z'),
  ]);
  let settled = false;
  void running.catch(() => (settled = true));
  g.open(1);
  g.open(0);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(settled, false, 'a branch still in flight holds the failure back');
  g.open(2);
  await assert.rejects(running, (err: unknown) => err instanceof SampleRejection && err.reason === 'answer: judge unusable');
  assert.deepEqual(
    calls.map((c) => c.model),
    ['a', 'b', 'c'],
  );
});

test('no branches: nothing sent, nothing recorded', async () => {
  const calls: CallRecord[] = [];
  assert.deepEqual(await callBranches<never[]>(calls, []), []);
  assert.equal(calls.length, 0);
});
