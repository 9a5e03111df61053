/**
 * The share of prompt tokens a provider's prompt cache serves, on real builds (dev server, an
 * in-process worker, the simulator's prefix cache as vLLM and as OpenAI keep one; images counted at
 * each of `--image-tokens`). Three builds (CC3M, ChartQA with reference answers, multiturn CC3M), each
 * on a fresh stack; prints each build's cached-prompt share, overall and per stage, and the three
 * together. (The arm with the framing text as a system message before the image is gone with that
 * layout; its figures stay in bench/notes/2026-11-24-prompt-cache-share.md.)
 * Run: npx tsx bench/promptCacheShare.ts [--samples 16] [--image-tokens 765,85]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { BuildConfigInput } from '../config/buildConfig.js';
import type { BuildReport } from '../output/contracts/buildReport.js';
import { PROMPT_CACHE_PRESETS } from '../simulator/promptCache.js';
import { LocalStore } from '../storage/localStore.js';
import { startStack } from '../test/harness/stack.js';
import { writeCc3m } from '../test/fixtures/cc3m.js';
import { writeChartqa } from '../test/fixtures/chartqa.js';

const { values } = parseArgs({ options: { samples: { type: 'string', default: '16' }, 'image-tokens': { type: 'string', default: '765,85' } } });
const SAMPLES = Number(values.samples);
const IMAGE_TOKENS = values['image-tokens'].split(',').map(Number);
Runtime.install({ logger: new DefaultLogger('WARN') });
const dir = await mkdtemp(path.join(tmpdir(), 'mmif-bench-prefix-'));
await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: SAMPLES, shards: 1 });
await writeChartqa(new LocalStore(path.join(dir, 'chartqa')));
const percent = (part: number, whole: number) => `${whole > 0 ? ((part / whole) * 100).toFixed(1) : '0.0'}%`;

const models = { default: { model: 'mmif-sim-vlm' } };
const BUILDS: Record<string, Omit<BuildConfigInput, 'buildId' | 'output' | 'seed'>> = {
  cc3m: { sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }], maxSamples: SAMPLES, shardSize: SAMPLES, models },
  // Every train sample of the fixture (4 human, 1 augmented), each with its reference answer.
  chartqa: { sources: [{ type: 'chartqa', uri: path.join(dir, 'chartqa'), splits: ['train'], sets: ['human', 'augmented'] }], maxSamples: 5, shardSize: 5, models },
  multiturn: {
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
    maxSamples: Math.min(SAMPLES, 6),
    shardSize: Math.min(SAMPLES, 6),
    mode: 'multiturn',
    chat: { turns: 4, maxInstructions: 2 },
    models,
  },
};

try {
  for (const imageTokens of IMAGE_TOKENS) {
    for (const [cache, settings] of Object.entries(PROMPT_CACHE_PRESETS)) {
      const total = { prompt: 0, cached: 0 };
      for (const [name, build] of Object.entries(BUILDS)) {
        const buildId = `prefix-${name}-${cache}-${imageTokens}`;
        const output = path.join(dir, buildId);
        const config: BuildConfigInput = { ...build, buildId, seed: 5, output };
        const stack = await startStack({ simulator: { seed: 5, promptCache: settings, imageTokens }, taskQueue: `bench-${buildId}` });
        try {
          const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: buildId, args: [config] })) as BuildReport;
          const usage = Object.entries(report.usage).filter(([stage]) => stage !== 'preflight');
          for (const [, u] of usage) {
            total.prompt += u.promptTokens;
            total.cached += u.cachedPromptTokens;
          }
          const stages = usage.map(([stage, u]) => `${stage} ${percent(u.cachedPromptTokens, u.promptTokens)} of ${u.promptTokens}`);
          console.log(`${cache} images ${imageTokens} ${name}: ${percent(report.cost.cachedPromptShare, 1)} cached; ${stages.join(', ')}`);
        } finally {
          await stack.stop();
        }
      }
      console.log(`${cache} images ${imageTokens} ALL THREE: ${percent(total.cached, total.prompt)} of ${total.prompt} prompt tokens cached`);
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
