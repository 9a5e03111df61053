// Rule-only rewards: responses per second per core of `mmif reward serve`'s /v1/rewards, HTTP included,
// (per CPU-second of this process, so a loaded machine does not hide it) and the ratio to calling the scorer (pipeline/rewards/scoreResponse.ts) in process. The shared IFEval
// response corpora (../shared/corpora, both files) reshaped as records: each response gets a ground
// truth of 4 rule constraints, seeded calls of the reference functions with arguments drawn for that
// text (bench/referenceMix.ts). The server runs in this process on one thread (one core), clients post
// batches of --batch items with --clients requests in flight; the in-process pass scores the same items.
//
// Run:   npx tsx bench/rewardThroughput.ts [--shared DIR] [--batch 64] [--clients 4] [--rounds 3]
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { rngFor, sampleK } from '../domain/random.js';
import type { GroundTruth } from '../domain/groundTruth.js';
import { scoreResponse } from '../pipeline/rewards/scoreResponse.js';
import { rewardServer } from '../cli/rewardServer.js';
import { corpusTexts, REFERENCE_FUNCTIONS, referenceCall, sharedDir } from './referenceMix.js';

const { values } = parseArgs({
  options: { shared: { type: 'string' }, batch: { type: 'string', default: '64' }, clients: { type: 'string', default: '4' }, rounds: { type: 'string', default: '3' } },
});
const batch = Number(values.batch);
const clients = Number(values.clients);
const rounds = Number(values.rounds);

const items = corpusTexts(sharedDir(values.shared)).map(({ id, text }) => {
  const rng = rngFor(7, 'reward-bench', id);
  const truth: GroundTruth = {
    id,
    image: 'images/00/0000000000000000000000000000000000000000000000000000000000000000.jpg',
    vacuous: 'fail',
    constraints: sampleK(rng, REFERENCE_FUNCTIONS, 4).map((func) => ({ type: func, text: func, method: 'rule' as const, verifiers: [referenceCall(rng, func, text)] })),
  };
  return { truth, response: text };
});
const total = items.length * rounds;

const cpuSeconds = (from: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1e6;
};
let started = performance.now();
let cpu = process.cpuUsage();
for (let r = 0; r < rounds; r++) for (const item of items) await scoreResponse(item.truth, item.response, 'fraction', undefined);
const inProcess = total / ((performance.now() - started) / 1000);
const inProcessCpu = total / cpuSeconds(cpu);

const server = rewardServer({ truths: new Map(), mode: 'fraction', maxBatch: batch, maxResponseChars: 1_000_000 });
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/rewards`;
const batches: Array<typeof items> = [];
for (let r = 0; r < rounds; r++) for (let i = 0; i < items.length; i += batch) batches.push(items.slice(i, i + batch));
let next = 0;
let scored = 0;
started = performance.now();
cpu = process.cpuUsage();
await Promise.all(
  Array.from({ length: clients }, async () => {
    while (next < batches.length) {
      const body = JSON.stringify({ items: batches[next++]!.map((i) => ({ ground_truth: i.truth, response: i.response })) });
      const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
      scored += ((await res.json()) as { items: unknown[] }).items.length;
    }
  }),
);
const overHttp = scored / ((performance.now() - started) / 1000);
// The clients' JSON encoding and fetch run in this process too: counted against the service (conservative).
const overHttpCpu = scored / cpuSeconds(cpu);
server.close();
console.log(
  JSON.stringify({
    responses: total,
    constraintsPerResponse: 4,
    batch,
    clients,
    inProcessPerSecond: Math.round(inProcess),
    httpPerSecond: Math.round(overHttp),
    inProcessPerCpuSecond: Math.round(inProcessCpu),
    httpPerCpuSecond: Math.round(overHttpCpu),
    httpToInProcessCpu: +(overHttpCpu / inProcessCpu).toFixed(3),
  }),
);
