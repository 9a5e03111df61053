/**
 * What a whole build will cost, forecast from a pilot: a build of the first samples of the same
 * seeded order (`mmif estimate`). Every figure is per planned sample of the pilot, scaled to the
 * samples the full build plans; the USD interval comes from the spread of the pilot's per-sample
 * costs (the mean's 95% interval, times the samples), so a small or uneven pilot says so.
 */
import type { BuildConfig } from '../../config/buildConfig.js';
import type { BuildPlan } from '../../pipeline/planning/planBuild.types.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { getJson, type ObjectStore } from '../../storage/objectStore.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import type { BuildReport } from '../contracts/buildReport.js';

/** What one sample's calls took: every call, paid now or a cache hit, at its price. */
export interface SampleCost {
  usd: number;
  requests: number;
  promptTokens: number;
  cachedPromptTokens: number;
  completionTokens: number;
}

export interface Forecast {
  pilot: { samples: number; instruct: number; dpo: number; requests: number; paidRequests: number; usd: number; seconds: number };
  /** Samples the config asks for (maxSamples; with `targets`, what the goals need at the pilot's yield, within maxSamples): what the forecast is for. */
  samples: number;
  /** What the sources hold now, when that is less than `samples`: a build of this config plans only these until more records come. */
  available?: number;
  /** The pilot's figures per sample, which every total is `samples` times: USD with its 95% interval, requests, tokens. */
  perSample: { usd: number; usdInterval: [number, number]; requests: number; inputTokens: number; outputTokens: number };
  requests: number;
  tokens: { input: number; cachedInput: number; output: number };
  /** USD of the whole build at the table's (or config's) prices; the pilot's samples included. */
  usd: number;
  /** The 95% interval of `usd` from the pilot's per-sample spread. */
  usdInterval: [number, number];
  /** Of `usd`, what the build still pays: the pilot's calls are in its model cache. */
  usdToPay: number;
  /** At the pilot's observed request rate (the configured endpoint limits), bounded by requestsPerMinute; null when the pilot paid for nothing (all cached). */
  wallSeconds: number | null;
  /** Models without a price: their tokens are in the forecast, not in its USD. */
  unpriced: string[];
  /** The pilot ran on the simulator: USD is what the named models would cost. */
  simulated: boolean;
}

/** Per planned sample of a build, what its calls took (from the samples' stage states). */
export async function sampleCosts(store: ObjectStore, layout: BuildLayout): Promise<SampleCost[]> {
  const bySample = new Map<string, SampleCost>();
  const prefix = `${layout.root}/_work/samples/`;
  for await (const { key } of store.list(prefix)) {
    const sampleId = key.slice(prefix.length).split('/')[0]!;
    const state = await getJson<{ calls?: CallRecord[] }>(store, key);
    const cost = bySample.get(sampleId) ?? { usd: 0, requests: 0, promptTokens: 0, cachedPromptTokens: 0, completionTokens: 0 };
    for (const c of state?.calls ?? []) {
      cost.usd += c.costUsd + c.savedUsd;
      cost.requests += 1;
      cost.promptTokens += c.promptTokens;
      cost.cachedPromptTokens += c.cachedPromptTokens ?? 0;
      cost.completionTokens += c.completionTokens;
    }
    bySample.set(sampleId, cost);
  }
  return [...bySample.values()];
}

/**
 * The samples the config asks for (its maxSamples, or with targets what the pilot's yield needs,
 * within maxSamples; never fewer than the pilot's), and what its sources hold now (`available`).
 * The forecast answers for the first: a config written for a large build over sources still being
 * gathered is forecast at its size, with a line saying what the sources hold.
 */
export function fullBuildSamples(config: BuildConfig, pilotPlan: BuildPlan, pilot: BuildReport): { asked: number; available: number } {
  const available = pilotPlan.sources.reduce((n, s) => n + s.samples, 0);
  let wanted = config.maxSamples;
  if (config.targets) {
    const planned = Math.max(pilot.counts.planned, 1);
    // A kind the pilot kept none of gives no yield to go by: the build may need every sample it may plan.
    const need = (goal: number | undefined, kept: number) => (goal === undefined ? 0 : kept === 0 ? Infinity : Math.ceil((goal * planned) / kept));
    const goals = { instruct: config.targets.instruct, dpo: config.targets.dpo };
    wanted = Math.min(wanted, Math.max(need(goals.instruct, pilot.counts.instruct), need(goals.dpo, pilot.counts.dpo)));
  }
  return { asked: Math.max(wanted, pilot.counts.planned), available };
}

export function forecastBuild(input: {
  config: BuildConfig;
  pilot: BuildReport;
  pilotSamples: readonly SampleCost[];
  fullSamples: { asked: number; available: number };
  seconds: number;
}): Forecast {
  const { config, pilot, pilotSamples, seconds } = input;
  const m = input.fullSamples.asked;
  const n = Math.max(pilotSamples.length, 1);
  const mean = (pick: (s: SampleCost) => number) => pilotSamples.reduce((sum, s) => sum + pick(s), 0) / n;
  const usdMean = mean((s) => s.usd);
  const sd = Math.sqrt(pilotSamples.reduce((sum, s) => sum + (s.usd - usdMean) ** 2, 0) / Math.max(n - 1, 1));
  const half = (1.96 * sd) / Math.sqrt(n);
  const requests = Math.round(m * mean((s) => s.requests));
  const pilotRequests = pilotSamples.reduce((sum, s) => sum + s.requests, 0);
  const paidRequests = Object.values(pilot.usage).reduce((sum, u) => sum + u.requests - u.cachedRequests, 0);
  const usd = m * usdMean;
  return {
    pilot: {
      samples: pilot.counts.planned,
      instruct: pilot.counts.instruct,
      dpo: pilot.counts.dpo,
      requests: pilotRequests,
      paidRequests,
      usd: pilotSamples.reduce((sum, s) => sum + s.usd, 0),
      seconds,
    },
    samples: m,
    ...(input.fullSamples.available < m ? { available: input.fullSamples.available } : {}),
    perSample: {
      usd: usdMean,
      usdInterval: [Math.max(0, usdMean - half), usdMean + half],
      requests: mean((s) => s.requests),
      inputTokens: mean((s) => s.promptTokens),
      outputTokens: mean((s) => s.completionTokens),
    },
    requests,
    tokens: {
      input: Math.round(m * mean((s) => s.promptTokens)),
      cachedInput: Math.round(m * mean((s) => s.cachedPromptTokens)),
      output: Math.round(m * mean((s) => s.completionTokens)),
    },
    usd,
    usdInterval: [Math.max(0, m * (usdMean - half)), m * (usdMean + half)],
    usdToPay: Math.max(0, m - pilotSamples.length) * usdMean,
    // The pilot's calls are cache hits for the build: only the rest are made.
    wallSeconds: wallSeconds(config, Math.max(0, requests - pilotRequests), paidRequests, seconds),
    unpriced: Object.keys(pilot.unpriced ?? {}).sort(),
    simulated: pilot.simulated,
  };
}

/** The requests still to make at the pilot's paid-request rate, or the slowest configured requestsPerMinute if slower. */
function wallSeconds(config: BuildConfig, toMake: number, paid: number, seconds: number): number | null {
  if (paid === 0 || seconds <= 0) return null;
  const observed = toMake / (paid / seconds);
  const rpm = Object.values(config.models).flatMap((e) => (e?.requestsPerMinute ? [e.requestsPerMinute] : []));
  const paced = rpm.length ? (toMake / Math.min(...rpm)) * 60 : 0;
  return Math.round(Math.max(observed, paced));
}

export function formatForecast(f: Forecast): string[] {
  const usd = (x: number) => `$${x.toFixed(4)}`;
  const priced = f.simulated ? " (simulated pilot: a forecast at the named models' prices)" : '';
  const lines = [
    `pilot: ${f.pilot.samples} samples -> ${f.pilot.instruct} SFT records, ${f.pilot.dpo} pairs; ${f.pilot.requests} requests (${f.pilot.paidRequests} paid now), ${usd(f.pilot.usd)}, ${f.pilot.seconds.toFixed(0)}s`,
    `per sample: ${usd(f.perSample.usd)} (95% interval ${usd(f.perSample.usdInterval[0])} - ${usd(f.perSample.usdInterval[1])}), ${f.perSample.requests.toFixed(1)} requests, ` +
      `${Math.round(f.perSample.inputTokens)} input + ${Math.round(f.perSample.outputTokens)} output tokens`,
    `full build (the ${f.samples.toLocaleString('en-US')} samples the config asks for): ${f.requests} requests, ${f.tokens.input} input tokens (${f.tokens.cachedInput} cached), ${f.tokens.output} output tokens`,
    ...(f.available === undefined
      ? []
      : [
          `the sources hold ${f.available.toLocaleString('en-US')} samples now: a build of this config plans those until they hold more (the forecast is for ${f.samples.toLocaleString('en-US')})`,
        ]),
    `cost: ${usd(f.usd)} (95% interval ${usd(f.usdInterval[0])} - ${usd(f.usdInterval[1])}); still to pay ${usd(f.usdToPay)}: the pilot's calls are cached${priced}`,
    `wall time: ${f.wallSeconds === null ? 'unknown (the pilot paid for nothing: every call was cached)' : `about ${formatSeconds(f.wallSeconds)} at the pilot's rate and the configured limits`}`,
  ];
  for (const model of f.unpriced) lines.push(`UNPRICED model ${model}: its tokens are in the forecast, not in its cost (set llm.prices["${model}"])`);
  return lines;
}

function formatSeconds(s: number): string {
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
