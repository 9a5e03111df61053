/**
 * A sample's model calls that do not depend on each other, sent together: a sample's wall time is its
 * chain of dependent calls, and the build's tail is its slowest samples' chains (ADR 0074). Each
 * branch records into a list of its own; once every branch has settled, the lists are appended to the
 * stage's `calls` in branch order, so a stage state's calls come in the same order whatever the
 * replies' timing, and a call one branch paid for is recorded even when another branch failed. The
 * first failure in branch order is then thrown (a SampleRejection rejects the sample as before).
 */
import type { CallRecord } from '../../llm/callRecord.js';

/** One branch: its calls go to the list it is given. */
export type CallBranch<T> = (calls: CallRecord[]) => Promise<T>;

/** Runs `branches` at once; their results in order, their calls appended to `calls` in order. */
export async function callBranches<T extends readonly unknown[]>(calls: CallRecord[], branches: { readonly [K in keyof T]: CallBranch<T[K]> }): Promise<T> {
  const lists = branches.map((): CallRecord[] => []);
  const settled = await Promise.allSettled(branches.map((branch, i) => branch(lists[i]!)));
  for (const list of lists) calls.push(...list);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
