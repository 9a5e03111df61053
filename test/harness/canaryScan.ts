/**
 * Where a secret could leave a test's processes, read back as text: every file under a folder, what
 * this process logged (an in-process worker logs through process.stdout/stderr), and every payload
 * of every workflow history on the stack's Temporal server, bytes decoded. `leaks` names the forms of
 * a key found in such text: as is, base64 (of itself and of its Bearer header) and URL-encoded.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@temporalio/client';

/** Every file under `root`, as text, by path. */
export async function filesText(root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files.set(path.join(entry.parentPath, entry.name), (await readFile(path.join(entry.parentPath, entry.name))).toString('latin1'));
  }
  return files;
}

/** The files under `root` holding a form of `key`, each with the forms found. */
export async function leakingFiles(root: string, key: string): Promise<string[]> {
  return [...(await filesText(root))].flatMap(([file, text]) => {
    const found = leaks(text, key);
    return found.length > 0 ? [`${file}: ${found.join(', ')}`] : [];
  });
}

/** What this process writes to stdout and stderr from now until `stop`. */
export function captureLogs(): { text(): string; stop(): void } {
  let logs = '';
  const writes = { out: process.stdout.write, err: process.stderr.write };
  const tee = (original: typeof process.stdout.write) =>
    function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      logs += String(chunk);
      return (original as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof process.stdout.write;
  process.stdout.write = tee(writes.out);
  process.stderr.write = tee(writes.err);
  return {
    text: () => logs,
    stop: () => {
      process.stdout.write = writes.out;
      process.stderr.write = writes.err;
    },
  };
}

/**
 * Every history of the workflow `prefix` and of what it started (its earlier runs, its child workflows
 * and their later runs), walked from the histories themselves, plus every workflow the server lists
 * whose id starts with `prefix`; payload bytes as text. The walk does not wait on the server's
 * visibility listing, which can lag a workflow started a moment ago.
 */
export async function historiesText(client: Client, prefix = ''): Promise<string> {
  const read = new Set<string>();
  let text = '';
  const visit = async (workflowId: string, runId: string): Promise<void> => {
    read.add(`${workflowId}/${runId}`);
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events = history.events ?? [];
    const started = events[0]?.workflowExecutionStartedEventAttributes;
    // Payload bytes come as Uint8Array, or base64 in the JSON form of the history.
    const decoded = (key: string, value: unknown) =>
      value instanceof Uint8Array ? Buffer.from(value).toString('latin1') : key === 'data' && typeof value === 'string' ? Buffer.from(value, 'base64').toString('latin1') : value;
    text += `${JSON.stringify(history, decoded)}\n`;
    const next: Array<[string, string]> = [];
    if (started?.continuedExecutionRunId) next.push([workflowId, started.continuedExecutionRunId]);
    for (const event of events) {
      const newRun = event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
      if (newRun) next.push([workflowId, newRun]);
      const child = event.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
      if (child?.workflowId && child.runId) next.push([child.workflowId, child.runId]);
    }
    for (const [id, run] of next) if (!read.has(`${id}/${run}`)) await visit(id, run);
  };
  const latest =
    prefix === ''
      ? undefined
      : await client.workflow
          .getHandle(prefix)
          .describe()
          .catch((error: unknown) => {
            if ((error as { name?: string }).name === 'WorkflowNotFoundError') return undefined;
            throw error;
          });
  if (latest) await visit(prefix, latest.runId);
  for await (const execution of client.workflow.list()) {
    if (execution.workflowId.startsWith(prefix) && !read.has(`${execution.workflowId}/${execution.runId}`)) await visit(execution.workflowId, execution.runId);
  }
  return text;
}

/** The forms of `key` found in `text`. */
export function leaks(text: string, key: string): string[] {
  const b64 = (value: string) => Buffer.from(value).toString('base64');
  const forms = {
    plain: key,
    base64: b64(key),
    'base64 unpadded': b64(key).replace(/=+$/, ''),
    'base64 Bearer': b64(`Bearer ${key}`).replace(/=+$/, ''),
    url: encodeURIComponent(key),
  };
  return Object.entries(forms)
    .filter(([, form]) => text.includes(form))
    .map(([name]) => name);
}
