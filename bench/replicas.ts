// Replicas of one model, as a paper-scale deployment runs them (issue 33): the paper mix (bench/
// paperSources.ts, times --scale) against simulator replicas, each with its own prefix and vision
// caches and one GPU of the Qwen2.5-VL-7B profile at --slots in flight. Arms, each a fresh build:
// `one` replica (the reference); `rr`, 4 behind a round-robin balancer (simulator/balancer.ts);
// `affine`, the same 4 in `baseUrls` (the engine routes each sample to its image's replica); `three`
// undisturbed; `kill`, 4 with one killed halfway through. Reports wall time, requests, cached prompt
// share and vision encodings per image (the pre-flight's probe image left out: it is no sample's).
// Run:   npx tsx bench/replicas.ts [--scale 0.00390625] [--slots 32] [--speedup 2] [--arms one,rr,affine,three,kill]
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import type { BuildConfigInput } from '../config/buildConfig.js';
import { startTemporalDevServer } from '../local/temporalDevServer.js';
import type { BuildReport } from '../output/contracts/buildReport.js';
import { GPU_PROFILES, GpuFleet } from '../simulator/gpuProfile.js';
import { PROMPT_CACHE_PRESETS } from '../simulator/promptCache.js';
import { startReplicas, type ReplicaSet } from '../simulator/replicas.js';
import { fmt, startWorkerProcess } from './harness.js';
import { PAPER_SOURCE_SIZES, paperMix, paperSources } from './paperSources.js';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: String(1 / 256) },
    slots: { type: 'string', default: '32' },
    speedup: { type: 'string', default: '2' },
    arms: { type: 'string', default: 'one,rr,affine,three,kill' },
  },
});
const SCALE = Number(values.scale);
const PROFILE = { requestsPerSecond: GPU_PROFILES['qwen2.5-vl-7b'].requestsPerSecond, slots: Number(values.slots) };
const SPEEDUP = Number(values.speedup);
const ARMS = values.arms.split(',');
const ROOT = path.join(process.env.TMPDIR ?? tmpdir(), 'mmif-bench', 'paper');
const OUT = path.join(process.env.TMPDIR ?? tmpdir(), 'mmif-bench', `replicas-${Date.now()}`);
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

const sources = await paperSources(ROOT, PAPER_SOURCE_SIZES, log);

interface Arm {
  name: string;
  wallSeconds: number;
  requests: number;
  promptTokens: number;
  cachedPromptTokens: number;
  encodings: number;
  idConflicts: number;
  r429: number;
  counts: BuildReport['counts'];
  modelCallRejects: number;
  perReplica: number[];
  /** The URLs the engine's pre-flight checks (each sends the probe image once). */
  probes: number;
  /** The engine's replica counts (build report): attempts spilled and re-routed, replicas taken out. */
  moves: { spilled: number; rerouted: number; ejections: number };
}

/** The stats of each killed replica at its death (a closed server answers no more). */
const killedAt = new Map<number, ReturnType<ReplicaSet['replicas'][number]['stats']>>();

const temporal = await startTemporalDevServer();
const connection = await Connection.connect({ address: temporal.address });
const client = new Client({ connection });
const results: Arm[] = [];
try {
  for (const name of ARMS) {
    const replicas = name === 'one' ? 1 : name === 'three' ? 3 : 4;
    const set = await startReplicas(
      replicas,
      { seed: 3, promptCache: PROMPT_CACHE_PRESETS.vllm, gpus: new GpuFleet(PROFILE, 1, SPEEDUP) },
      name === 'rr' ? 'round-robin' : undefined,
    );
    const urls = set.replicas.map((r) => r.url);
    const endpoint = set.balancer ? { baseUrl: set.balancer.url } : replicas === 1 ? { baseUrl: urls[0]! } : { baseUrls: urls };
    const taskQueue = `bench-replicas-${name}`;
    const worker = await startWorkerProcess({ address: temporal.address, taskQueue, simulatorUrl: urls[0]! });
    try {
      const buildId = `replicas-${name}`;
      const config: BuildConfigInput = {
        buildId,
        seed: 1,
        output: path.join(OUT, name),
        ...paperMix(sources, SCALE),
        shardSize: 64,
        sliceSize: 16,
        // A replica's limit is its GPU's slots (`concurrency` applies to each of `baseUrls`); one URL in front of them all holds them all.
        models: { default: { model: 'mmif-sim-vlm', concurrency: 'baseUrls' in endpoint ? PROFILE.slots : replicas * PROFILE.slots, ...endpoint } },
      };
      const started = Date.now();
      const build = client.workflow.execute('buildDataset', { taskQueue, workflowId: buildId, args: [config] }) as Promise<BuildReport>;
      const killer = name === 'kill' ? killMidBuild(set, build) : undefined;
      const report = await build;
      const wallSeconds = (Date.now() - started) / 1000;
      await killer;
      const stats = set.replicas.map((r, i) => (killedAt.has(i) ? killedAt.get(i)! : r.stats()));
      const sum = (pick: (s: (typeof stats)[number]) => number) => stats.reduce((total, s) => total + pick(s), 0);
      const arm: Arm = {
        name,
        wallSeconds,
        requests: sum((s) => s.completed),
        promptTokens: sum((s) => s.promptTokens),
        cachedPromptTokens: sum((s) => s.cachedPromptTokens),
        encodings: sum((s) => s.vision.encodings),
        idConflicts: sum((s) => s.vision.idConflicts),
        r429: sum((s) => s.byStatus['429'] ?? 0),
        counts: report.counts,
        modelCallRejects: report.modelCallRejects,
        perReplica: stats.map((s) => s.completed),
        probes: 'baseUrls' in endpoint ? urls.length : 1,
        moves: (report.replicas ?? []).reduce((m, r) => ({ spilled: m.spilled + r.spilled, rerouted: m.rerouted + r.rerouted, ejections: m.ejections + r.ejections }), {
          spilled: 0,
          rerouted: 0,
          ejections: 0,
        }),
      };
      results.push(arm);
      log(
        `${name}: ${fmt(wallSeconds)} s, ${arm.requests} requests (${arm.perReplica.join('/')}), ${pct(arm.cachedPromptTokens, arm.promptTokens)} of prompt tokens cached, ` +
          `${arm.encodings} vision encodings, ${arm.idConflicts} id conflicts, ${arm.r429} 429s; attempts spilled ${arm.moves.spilled}, re-routed ${arm.moves.rerouted}, ${arm.moves.ejections} replicas taken out; records ${report.counts.instruct}+${report.counts.dpo} of ${report.counts.planned} planned, ${report.modelCallRejects} model-call rejects`,
      );
    } finally {
      killedAt.clear();
      await worker.stop();
      await set.close();
    }
  }
  summary();
} finally {
  await connection.close();
  await temporal.stop();
  await rm(OUT, { recursive: true, force: true });
}

/** Kills replica 1 once the replicas have answered half the affine arm's requests (or half of a guess without one). */
async function killMidBuild(set: ReplicaSet, build: Promise<unknown>): Promise<void> {
  const affine = results.find((a) => a.name === 'affine');
  const half = (affine?.requests ?? 2000) / 2;
  let done = false;
  void build.finally(() => (done = true));
  while (!done && set.replicas.reduce((n, r) => n + r.stats().completed, 0) < half) await sleep(200);
  if (done) return;
  killedAt.set(1, set.replicas[1]!.stats());
  await set.kill(1);
  log(
    `kill: replica 1 (${set.replicas[1]!.url}) killed after ${set.replicas.reduce((n, r, i) => n + (i === 1 ? killedAt.get(1)!.completed : r.stats().completed), 0)} answered requests`,
  );
}

function pct(part: number, whole: number): string {
  return `${whole > 0 ? ((100 * part) / whole).toFixed(1) : '0.0'}%`;
}

function summary(): void {
  const by = (name: string) => results.find((a) => a.name === name);
  const one = by('one');
  const share = (a: Arm) => (100 * a.cachedPromptTokens) / a.promptTokens;
  const lines = [`scale ${SCALE}, GPU ${PROFILE.requestsPerSecond} req/s x ${PROFILE.slots} slots per replica, speedup ${SPEEDUP}`];
  for (const a of results) {
    const perImage = one ? fmt((a.encodings - a.probes) / (one.encodings - one.probes), 2) : 'n/a';
    lines.push(
      `${a.name}: wall ${fmt(a.wallSeconds)} s; cached prompt share ${fmt(share(a))}%; vision encodings per image ${perImage}; requests ${a.requests}; records ${a.counts.instruct}+${a.counts.dpo}`,
    );
  }
  const [rr, affine, three, kill] = [by('rr'), by('affine'), by('three'), by('kill')];
  if (one && affine) lines.push(`affine cached share ${fmt(share(affine))}% vs one replica ${fmt(share(one))}%: ${fmt(share(one) - share(affine))} points apart (goal <= 5)`);
  if (rr && affine) lines.push(`round-robin / affine: wall ${fmt(rr.wallSeconds / affine.wallSeconds, 2)}x, encodings ${fmt(rr.encodings / affine.encodings, 2)}x`);
  if (three && kill)
    lines.push(
      `kill / undisturbed three: wall ${fmt(kill.wallSeconds / three.wallSeconds, 2)}x (goal <= 1.5); records ${kill.counts.instruct}+${kill.counts.dpo} vs ${three.counts.instruct}+${three.counts.dpo}`,
    );
  console.log(lines.join('\n'));
}
