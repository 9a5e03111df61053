/**
 * A build as planned before request layouts were recorded (prompts/chat.ts): its stored config,
 * written ahead of planning, without `requestLayout`. Planning keeps a stored config that matches, so
 * the build runs in layout 1, as it did then (test/e2e/requestLayout.test.ts, bench/promptCacheShare.ts).
 */
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import { configFingerprint } from '../../pipeline/planBuild.js';
import type { StoredConfig } from '../../pipeline/planBuild.types.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { putJson, type ObjectStore } from '../../storage/objectStore.js';

export async function planAsBeforeLayouts(store: ObjectStore, input: BuildConfigInput): Promise<void> {
  const config = parseBuildConfig(input);
  await putJson(store, buildLayout(config.buildId).config, { configFingerprint: configFingerprint(config), config } satisfies StoredConfig);
}
