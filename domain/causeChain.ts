/**
 * An error and the errors it wraps, outermost first: Temporal nests "Child Workflow execution failed"
 * over "Activity task failed" over the activity's own failure, and Node's fetch nests the socket's
 * error under the SDK's. Every reader of a cause (the build's one failure line, the CLI's exit code,
 * resume's refused-config check, a connection's system error code) walks it here, bounded: a cause
 * chain is data from elsewhere and may loop. Pure, so workflow code may use it (WORKFLOW_BOUNDARY).
 */

/** A link of the chain: an object, perhaps an Error or a Temporal failure. */
type Cause = { message?: string; type?: unknown; cause?: unknown };

/** How many links are read at most. */
const MAX_DEPTH = 20;

/** `err` and its causes (each object's `cause`), outermost first, up to MAX_DEPTH of them. */
export function causeChain(err: unknown): Cause[] {
  const chain: Cause[] = [];
  for (let e = err; typeof e === 'object' && e !== null && chain.length < MAX_DEPTH; e = (e as Cause).cause) chain.push(e as Cause);
  return chain;
}
