// The CPU cost of the small-file operations a worker makes per model call, on LocalStore: a cache
// entry or stage state written with put (temp file + rename) or create (in place), a line appended
// (the sent log), a read that hits or misses, and for reference what a read cost with a realpath
// before it (LocalStore.get before it trusted folders already found inside the root).
// CPU is process.cpuUsage() (all threads: the libuv pool does the syscalls), per operation, 32 at a time.
//
// Run:   npx tsx bench/smallFiles.ts [--ops 3000] [--rounds 2]
import { readFile as readFileCallback } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { mapLimit } from '../domain/mapLimit.js';
import { LocalStore } from '../storage/localStore.js';
import { loadAverage } from './harness.js';

const { values } = parseArgs({ options: { ops: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '2' } } });
const OPS = Number(values.ops);
// As LocalStore reads (through the callback API).
const readWhole = promisify(readFileCallback);
// About a cached reply's size.
const BODY = JSON.stringify({
  content: 'x'.repeat(600),
  finishReason: 'stop',
  model: 'sim',
  promptTokens: 900,
  completionTokens: 200,
  simulated: true,
  owner: 'o',
  scope: 's/answer',
  execution: 'e',
});

/** A cache-like key: 256 folders of hashed names. */
const keyOf = (i: number) => `${(i % 256).toString(16).padStart(2, '0')}/${i.toString(16).padStart(64, '0')}.json`;

async function measure(name: string, op: (i: number) => Promise<unknown>): Promise<void> {
  const before = process.cpuUsage();
  const started = performance.now();
  await mapLimit(
    Array.from({ length: OPS }, (_, i) => i),
    32,
    (i) => op(i),
  );
  const used = process.cpuUsage(before);
  const us = (n: number) => (n / OPS).toFixed(0).padStart(4);
  console.log(`${name.padEnd(34)} ${us(used.user)} user + ${us(used.system)} system = ${us(used.user + used.system)} µs/op  (${(performance.now() - started).toFixed(0)} ms)`);
}

for (let round = 1; round <= Number(values.rounds); round++) {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-small-files-'));
  try {
    console.log(`round ${round} (${OPS} operations each, load average ${loadAverage()})`);
    const puts = new LocalStore(path.join(dir, 'put'));
    const creates = new LocalStore(path.join(dir, 'create'));
    // In the order A B B A: file creation costs drift with what the rest of the machine does to the disk.
    await measure('put (temp file + rename)', (i) => puts.put(keyOf(i), BODY));
    await measure('create (in place)', (i) => creates.create(keyOf(i), BODY));
    await measure('create (in place), again', (i) => creates.create(keyOf(i + 2 * OPS), BODY));
    await measure('put (temp file + rename), again', (i) => puts.put(keyOf(i + 2 * OPS), BODY));
    await measure('appendLine (8 logs)', (i) => creates.appendLine(`logs/${i % 8}.jsonl`, BODY));
    // A B B A too: the first reads of the files are slower than later ones.
    const getHit = () => measure('get, hit', (i) => creates.get(keyOf(i)));
    const getMiss = () => measure('get, miss', (i) => creates.get(keyOf(i + OPS)));
    const realpathHit = () => measure('realpath + read, hit (get before)', async (i) => readWhole(await realpath(path.join(creates.root, keyOf(i)))));
    const realpathMiss = () => measure('realpath, miss (get before)', (i) => realpath(path.join(creates.root, keyOf(i + OPS))).catch(() => undefined));
    for (const read of [getHit, realpathHit, realpathHit, getHit, getMiss, realpathMiss, realpathMiss, getMiss]) await read();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
