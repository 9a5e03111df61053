/**
 * The share of prompt tokens a provider's prompt cache serves, measured on a real build: Temporal
 * dev server, an in-process worker, the simulator with its prefix cache (simulator/promptCache.ts)
 * as vLLM keeps one (16-token blocks, no minimum) and as OpenAI does (1,024-token minimum, 128-token
 * increments), images counted at `--image-tokens` (default 765: a 1024x1024 image at OpenAI's high
 * detail; the simulator's own default is 85, low detail). Prints the build report's cached-prompt
 * share, overall and per stage.
 *
 * Run: npx tsx bench/promptCacheShare.ts [--samples 16] [--image-tokens 765]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { BuildConfigInput } from '../config/buildConfig.js';
import type { BuildReport } from '../output/buildReport.js';
import { PROMPT_CACHE_PRESETS } from '../simulator/promptCache.js';
import { LocalStore } from '../storage/localStore.js';
import { startStack } from '../test/harness/stack.js';
import { writeCc3m } from '../test/fixtures/cc3m.js';

const { values } = parseArgs({ options: { samples: { type: 'string', default: '16' }, 'image-tokens': { type: 'string', default: '765' } } });
const SAMPLES = Number(values.samples);
const IMAGE_TOKENS = Number(values['image-tokens']);
Runtime.install({ logger: new DefaultLogger('WARN') });
const dir = await mkdtemp(path.join(tmpdir(), 'mmif-bench-prefix-'));
await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: SAMPLES, shards: 1 });
const percent = (part: number, whole: number) => `${whole > 0 ? ((part / whole) * 100).toFixed(1) : '0.0'}%`;
try {
  for (const [name, settings] of Object.entries(PROMPT_CACHE_PRESETS)) {
    const stack = await startStack({ simulator: { seed: 5, promptCache: settings, imageTokens: IMAGE_TOKENS }, taskQueue: `bench-prefix-${name}` });
    try {
      const config: BuildConfigInput = {
        buildId: `prefix-${name}`,
        seed: 5,
        output: path.join(dir, name),
        sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
        maxSamples: SAMPLES,
        shardSize: SAMPLES,
        models: { default: { model: 'mmif-sim-vlm' } },
      };
      const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: config.buildId, args: [config] })) as BuildReport;
      const stages = Object.entries(report.usage).map(([stage, u]) => `${stage} ${percent(u.cachedPromptTokens, u.promptTokens)} of ${u.promptTokens}`);
      console.log(`${name} (min ${settings.minTokens}, blocks of ${settings.blockTokens}; images ${IMAGE_TOKENS} tokens): ${(report.cost.cachedPromptShare * 100).toFixed(1)}% of prompt tokens cached; ${stages.join(', ')}`);
    } finally {
      await stack.stop();
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
