/**
 * Infrastructure failures of a store named where the user reads them: an error the object store or
 * the disk raises says which component, which address or folder, and which key was being read or
 * written, so `build X failed: connect ECONNREFUSED 127.0.0.1:28900` (which reads like the model
 * endpoint) becomes `object store http://127.0.0.1:28900 (s3://bucket/out): writing 'X/...': connect
 * ECONNREFUSED ...`, and a full disk names its folder, the key and the free space. The error is the
 * same object with a longer message: its class, `code` and causes, which retries and the output probe
 * classify by, are untouched. Answers the store gave (a missing object, a refused key) pass as they are.
 */
import { statfs } from 'node:fs/promises';
import { StoreError, type ObjectInfo, type ObjectStore } from './objectStore.js';
import { s3Answer } from './s3Answer.js';

/** Local errors of the disk itself, not of a path (Node's common system errors, https://nodejs.org/api/errors.html#common-system-errors; EDQUOT and EIO from errno(3)). */
const DISK_CODES: Record<string, string> = { ENOSPC: 'no space left on the device', EDQUOT: 'disk quota exceeded', EIO: 'input/output error' };

const NAMED = Symbol('mmif.failureNamed');

type Verb = 'reading' | 'writing' | 'listing' | 'deleting';

export function namingFailures(store: ObjectStore): ObjectStore {
  const named = async <T>(verb: Verb, key: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      throw await describe(store, verb, key, err);
    }
  };
  return {
    root: store.root,
    ...(store.endpoint ? { endpoint: store.endpoint } : {}),
    get: (key) => named('reading', key, () => store.get(key)),
    getRange: (key, start, end) => named('reading', key, () => store.getRange(key, start, end)),
    openRead: (key) => named('reading', key, () => store.openRead(key)),
    put: (key, body, contentType) => named('writing', key, () => store.put(key, body, contentType)),
    create: (key, body, contentType) => named('writing', key, () => store.create(key, body, contentType)),
    putIfAbsent: (key, body, contentType) => named('writing', key, () => store.putIfAbsent(key, body, contentType)),
    exists: (key) => named('reading', key, () => store.exists(key)),
    appendLine: (key, line) => named('writing', key, () => store.appendLine(key, line)),
    readLines: (key) => named('reading', key, () => store.readLines(key)),
    list: (prefix) => listNamed(store, prefix),
    delete: (key) => named('deleting', key, () => store.delete(key)),
    sweepIncompleteWrites: (prefix) => named('deleting', prefix, () => store.sweepIncompleteWrites(prefix)),
  };
}

async function* listNamed(store: ObjectStore, prefix: string): AsyncGenerator<ObjectInfo> {
  try {
    yield* store.list(prefix);
  } catch (err) {
    throw await describe(store, 'listing', prefix, err);
  }
}

/** `err` with the component, its address and the key in front of its message, when it is the infrastructure's. */
async function describe(store: ObjectStore, verb: Verb, key: string, err: unknown): Promise<unknown> {
  if (!(err instanceof Error) || (err as { [NAMED]?: true })[NAMED] || err instanceof StoreError) return err;
  let prefix: string | undefined;
  if (store.endpoint) {
    // An S3 answer other than a server error is the store's word on the request (NoSuchKey, AccessDenied...), already named by its caller.
    const answer = s3Answer(err);
    if (!answer || (answer.status !== undefined && answer.status >= 500)) prefix = `object store ${store.endpoint} (${store.root}): ${verb} '${key}'`;
  } else {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code in DISK_CODES) prefix = `disk ${store.root}: ${DISK_CODES[code]} ${verb} '${key}'${await freeSpace(store.root)}`;
  }
  if (!prefix) return err;
  // A logged error shows its stack, whose first line holds the message as it was when first read.
  const [bare, stack] = [err.message, err.stack];
  err.message = `${prefix}: ${bare}`;
  if (stack && bare) err.stack = stack.replace(bare, err.message);
  Object.defineProperty(err, NAMED, { value: true });
  return err;
}

/** ` (N MB free of M MB)` for the file system holding `root`, or nothing when it cannot be read. */
async function freeSpace(root: string): Promise<string> {
  const mb = (blocks: number, size: number) => `${Math.floor((blocks * size) / 2 ** 20)} MB`;
  try {
    const fs = await statfs(root);
    return ` (${mb(fs.bavail, fs.bsize)} free of ${mb(fs.blocks, fs.bsize)})`;
  } catch {
    return '';
  }
}
