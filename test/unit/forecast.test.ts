/** The forecast `mmif estimate` prints, from a pilot's per-sample figures: scaling, the interval, targets through the pilot's yield. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { forecastBuild, fullBuildSamples, type SampleCost } from '../../output/reports/forecast.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { BuildPlan } from '../../pipeline/planning/planBuild.types.js';
import { emptyUsage } from '../../output/commit/manifest.js';

const base = { buildId: 'b', output: '/tmp/out', sources: [{ type: 'cc3m' as const, uri: '/tmp/cc3m' }], models: { default: { model: 'gpt-4o-mini' } } };
const plan = (samples: number) => ({ sources: [{ samples }] }) as unknown as BuildPlan;
const pilot = (planned: number, instruct: number, dpo: number, paid = 40) =>
  ({ counts: { planned, instruct, dpo }, usage: { answer: { ...emptyUsage(), requests: 50, cachedRequests: 50 - paid } }, simulated: true }) as unknown as BuildReport;
const sample = (usd: number, requests = 5): SampleCost => ({ usd, requests, promptTokens: 1000, cachedPromptTokens: 200, completionTokens: 300 });

test('samples: maxSamples within what the sources hold; with targets, what the goals need at the pilot yield', () => {
  assert.equal(fullBuildSamples(parseBuildConfig({ ...base, maxSamples: 500 }), plan(300), pilot(10, 8, 6)), 300, 'the sources hold 300');
  assert.equal(fullBuildSamples(parseBuildConfig({ ...base, maxSamples: 100 }), plan(300), pilot(10, 8, 6)), 100);
  // 80 SFT records at 8 per 10 samples: 100 samples; 90 pairs at 6 per 10: 150. The larger need wins.
  const targets = parseBuildConfig({ ...base, maxSamples: 1000, targets: { instruct: 80, dpo: 90 } });
  assert.equal(fullBuildSamples(targets, plan(5000), pilot(10, 8, 6)), 150);
  // A pilot that kept nothing: the need is bounded by maxSamples, not infinite.
  assert.equal(fullBuildSamples(targets, plan(5000), pilot(10, 0, 0)), 1000);
});

test('the forecast scales the pilot per sample, its interval comes from the spread, and what is still to pay leaves the pilot out', () => {
  const config = parseBuildConfig({ ...base, maxSamples: 100, models: { default: { model: 'gpt-4o-mini', requestsPerMinute: 60 } } });
  const even = forecastBuild({ config, pilot: pilot(4, 3, 2), pilotSamples: [sample(0.01), sample(0.01), sample(0.01), sample(0.01)], fullSamples: 100, seconds: 10 });
  assert.equal(even.requests, 500);
  assert.deepEqual(even.tokens, { input: 100_000, cachedInput: 20_000, output: 30_000 });
  assert.ok(Math.abs(even.usd - 1) < 1e-9);
  assert.deepEqual(
    even.usdInterval.map((x) => Number(x.toFixed(9))),
    [1, 1],
    'no spread, no width',
  );
  assert.ok(Math.abs(even.usdToPay - 0.96) < 1e-9);
  // 480 requests still to make: 40 paid in 10 s would take 120 s, but 60 per minute takes 480 s.
  assert.equal(even.wallSeconds, 480);
  const uneven = forecastBuild({ config, pilot: pilot(4, 3, 2), pilotSamples: [sample(0), sample(0.02), sample(0), sample(0.02)], fullSamples: 100, seconds: 10 });
  assert.ok(Math.abs(uneven.usd - 1) < 1e-9);
  const half = (1.96 * Math.sqrt(0.0004 / 3)) / 2; // the mean's 95% half-width: 1.96 sd / sqrt(n)
  assert.ok(Math.abs(uneven.usdInterval[1] - 100 * (0.01 + half)) < 1e-9);
  assert.equal(uneven.usdInterval[0], 0, 'never below $0: 0.01 - half is negative');
  assert.equal(forecastBuild({ config, pilot: pilot(4, 3, 2, 0), pilotSamples: [sample(0.01)], fullSamples: 100, seconds: 10 }).wallSeconds, null, 'all cached: no rate to go by');
});
