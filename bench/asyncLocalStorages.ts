// What each AsyncLocalStorage in use costs every await in the process on this Node (ADR 0085): the
// same 300,000 awaits run under k nested `run`s of k storages, for each k, each count in a child
// process of its own (a storage once used stays enabled for the process's life).
//
// Run:   npx tsx bench/asyncLocalStorages.ts [--counts 0,1,2,5] [--awaits 300000]
import { execFileSync } from 'node:child_process';
import { AsyncLocalStorage } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { counts: { type: 'string', default: '0,1,2,5' }, awaits: { type: 'string', default: '300000' }, only: { type: 'string' } } });
const awaits = Number(values.awaits);

if (values.only !== undefined) {
  const storages = Array.from({ length: Number(values.only) }, () => new AsyncLocalStorage<object>());
  const leaf = async (i: number) => {
    await null;
    return i;
  };
  const work = async () => {
    let sum = 0;
    for (let i = 0; i < awaits; i++) sum += await leaf(i);
    return sum;
  };
  const run = storages.reduce<() => Promise<number>>((inner, storage) => () => storage.run({}, inner), work);
  const started = process.hrtime.bigint();
  await run();
  console.log(Number(process.hrtime.bigint() - started) / 1e6);
} else {
  const self = fileURLToPath(import.meta.url);
  console.log(`Node ${process.version}, ${awaits} awaits`);
  for (const k of values.counts.split(',').map(Number)) {
    const ms = Number(execFileSync(process.execPath, ['--import', 'tsx', self, '--only', String(k), '--awaits', String(awaits)], { encoding: 'utf8' }).trim());
    console.log(`${k} storages: ${ms.toFixed(0)} ms (${((1000 * ms) / awaits).toFixed(2)} µs per await)`);
  }
}
