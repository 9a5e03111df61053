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

/** Every history of every workflow on the server (workflow ids starting with `prefix`), payload bytes as text. */
export async function historiesText(client: Client, prefix = ''): Promise<string> {
  let text = '';
  for await (const execution of client.workflow.list()) {
    if (!execution.workflowId.startsWith(prefix)) continue;
    const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    // Payload bytes come as Uint8Array, or base64 in the JSON form of the history.
    const decoded = (key: string, value: unknown) =>
      value instanceof Uint8Array ? Buffer.from(value).toString('latin1') : key === 'data' && typeof value === 'string' ? Buffer.from(value, 'base64').toString('latin1') : value;
    text += `${JSON.stringify(history, decoded)}\n`;
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
