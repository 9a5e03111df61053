/** The forecast `mmif estimate` prints, from a pilot's per-sample figures: scaling, the interval, targets through the pilot's yield. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { forecastBuild, formatForecast, fullBuildSamples, type SampleCost } from '../../output/reports/forecast.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { BuildPlan } from '../../pipeline/planning/planBuild.types.js';
import { emptyUsage } from '../../output/commit/manifest.js';

const base = { buildId: 'b', output: '/tmp/out', sources: [{ type: 'cc3m' as const, uri: '/tmp/cc3m' }], models: { default: { model: 'gpt-4o-mini' } } };
const plan = (samples: number) => ({ sources: [{ samples }] }) as unknown as BuildPlan;
const pilot = (planned: number, instruct: number, dpo: number, paid = 40) =>
  ({ counts: { planned, instruct, dpo }, usage: { answer: { ...emptyUsage(), requests: 50, cachedRequests: 50 - paid } }, simulated: true }) as unknown as BuildReport;
const sample = (usd: number, requests = 5): SampleCost => ({ usd, requests, promptTokens: 1000, cachedPromptTokens: 200, completionTokens: 300 });

test("samples: the config's maxSamples, beside what the sources hold; with targets, what the goals need at the pilot yield", () => {
  // The paper's 23k mix over sources that hold 41 records so far: the forecast is for 23,000.
  assert.deepEqual(fullBuildSamples(parseBuildConfig({ ...base, maxSamples: 23_000 }), plan(41), pilot(41, 30, 20)), { asked: 23_000, available: 41 });
  assert.deepEqual(fullBuildSamples(parseBuildConfig({ ...base, maxSamples: 100 }), plan(300), pilot(10, 8, 6)), { asked: 100, available: 300 });
  // 80 SFT records at 8 per 10 samples: 100 samples; 90 pairs at 6 per 10: 150. The larger need wins.
  const targets = parseBuildConfig({ ...base, maxSamples: 1000, targets: { instruct: 80, dpo: 90 } });
  assert.equal(fullBuildSamples(targets, plan(5000), pilot(10, 8, 6)).asked, 150);
  // A pilot that kept nothing: the need is bounded by maxSamples, not infinite.
  assert.equal(fullBuildSamples(targets, plan(5000), pilot(10, 0, 0)).asked, 1000);
});

test('a forecast for more samples than the sources hold is for the asked size, with per-sample figures and a line saying what the sources hold', () => {
  const config = parseBuildConfig({ ...base, maxSamples: 23_000 });
  const f = forecastBuild({
    config,
    pilot: pilot(4, 3, 2),
    pilotSamples: [sample(0.01), sample(0.03), sample(0.01), sample(0.03)],
    fullSamples: { asked: 23_000, available: 41 },
    seconds: 10,
  });
  assert.equal(f.samples, 23_000);
  assert.equal(f.available, 41);
  assert.ok(Math.abs(f.usd - 23_000 * 0.02) < 1e-9);
  assert.equal(f.perSample.requests, 5);
  assert.ok(Math.abs(f.perSample.usd - 0.02) < 1e-12 && f.perSample.usdInterval[0] < 0.02 && f.perSample.usdInterval[1] > 0.02);
  assert.ok(Math.abs(f.usdInterval[1] - 23_000 * f.perSample.usdInterval[1]) < 1e-9, 'the total interval is the per-sample one times the samples');
  const lines = formatForecast(f);
  assert.ok(lines.includes('the sources hold 41 samples now: a build of this config plans those until they hold more (the forecast is for 23,000)'), lines.join('\n'));
  assert.ok(
    lines.some((l) => l.startsWith('full build (the 23,000 samples the config asks for): 115000 requests')),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((l) => /^per sample: \$0\.0200 \(95% interval \$0\.\d{4} - \$0\.\d{4}\), 5\.0 requests, 1000 input \+ 300 output tokens$/.test(l)),
    lines.join('\n'),
  );
  const enough = forecastBuild({ config, pilot: pilot(4, 3, 2), pilotSamples: [sample(0.01)], fullSamples: { asked: 100, available: 300 }, seconds: 10 });
  assert.equal(enough.available, undefined, 'no line when the sources hold enough');
});

test('the forecast scales the pilot per sample, its interval comes from the spread, and what is still to pay leaves the pilot out', () => {
  const config = parseBuildConfig({ ...base, maxSamples: 100, models: { default: { model: 'gpt-4o-mini', requestsPerMinute: 60 } } });
  const even = forecastBuild({
    config,
    pilot: pilot(4, 3, 2),
    pilotSamples: [sample(0.01), sample(0.01), sample(0.01), sample(0.01)],
    fullSamples: { asked: 100, available: 1000 },
    seconds: 10,
  });
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
  const uneven = forecastBuild({
    config,
    pilot: pilot(4, 3, 2),
    pilotSamples: [sample(0), sample(0.02), sample(0), sample(0.02)],
    fullSamples: { asked: 100, available: 1000 },
    seconds: 10,
  });
  assert.ok(Math.abs(uneven.usd - 1) < 1e-9);
  const half = (1.96 * Math.sqrt(0.0004 / 3)) / 2; // the mean's 95% half-width: 1.96 sd / sqrt(n)
  assert.ok(Math.abs(uneven.usdInterval[1] - 100 * (0.01 + half)) < 1e-9);
  assert.equal(uneven.usdInterval[0], 0, 'never below $0: 0.01 - half is negative');
  assert.equal(
    forecastBuild({ config, pilot: pilot(4, 3, 2, 0), pilotSamples: [sample(0.01)], fullSamples: { asked: 100, available: 1000 }, seconds: 10 }).wallSeconds,
    null,
    'all cached: no rate to go by',
  );
});
