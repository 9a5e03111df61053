/**
 * The stores' append-only logs (storage/: appendLine, readLines) keep every line of every writer on
 * local disk and on S3. One suite, run on each store by its tier.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openStore } from '../../storage/openStore.js';
import type { Backend } from '../fixtures/backends.js';

/** The append-only log's test on one store: test/unit runs it on local disk, test/integration on S3. */
export function appendLogTests(backend: Backend): void {
  before(() => backend.setUp());
  after(() => backend.tearDown());

  test(`${backend.name}: an append-only log keeps every line of every writer, and a missing log reads as none`, async () => {
    const root = backend.freshRoot();
    const writer = openStore(root, backend.s3);
    const other = openStore(root, backend.s3); // another worker on the same store
    assert.deepEqual(await writer.readLines('logs/a.jsonl'), []);
    await writer.appendLine('logs/a.jsonl', '{"n":1}');
    await other.appendLine('logs/a.jsonl', '{"n":2}');
    await Promise.all([3, 4, 5].map((n) => writer.appendLine('logs/a.jsonl', `{"n":${n}}`)));
    await writer.appendLine('logs/b.jsonl', '{"n":6}');
    const lines = await other.readLines('logs/a.jsonl');
    assert.deepEqual(lines.slice(0, 2), ['{"n":1}', '{"n":2}']);
    assert.deepEqual([...lines].sort(), ['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}', '{"n":5}']);
    assert.deepEqual(await writer.readLines('logs/b.jsonl'), ['{"n":6}']);
    if (backend.name === 'local disk') {
      // A line cut by a crash mid-write (no newline yet) is not a line.
      await appendFile(path.join(root, 'logs/b.jsonl'), '{"n":7');
      assert.deepEqual(await writer.readLines('logs/b.jsonl'), ['{"n":6}']);
      // On disk when the call returns, before any other turn of the event loop (a sent mark is
      // written inside its request's limiter slot); a new log's folder is made first.
      await writer.appendLine('logs/new/c.jsonl', '{"n":8}');
      assert.equal(readFileSync(path.join(root, 'logs/new/c.jsonl'), 'utf8'), '{"n":8}\n');
      const appended = writer.appendLine('logs/new/c.jsonl', '{"n":9}');
      assert.equal(readFileSync(path.join(root, 'logs/new/c.jsonl'), 'utf8'), '{"n":8}\n{"n":9}\n');
      await appended;
    }
  });
}
