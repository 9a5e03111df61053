/**
 * A build as planned before request layouts were recorded (prompts/chat.ts): its stored config,
 * written ahead of planning, without `requestLayout`. Planning keeps a stored config that matches, so
 * the build runs in layout 1, as it did then (test/e2e/requestLayout.test.ts, bench/promptCacheShare.ts);
 * or as planned under a later layout, recorded, which it keeps the same way.
 */
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import { storedConfigOf } from '../../pipeline/planning/planBuild.js';
import type { RequestLayout } from '../../prompts/chat.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { putJson, type ObjectStore } from '../../storage/objectStore.js';

export async function planAsBeforeLayouts(store: ObjectStore, input: BuildConfigInput): Promise<void> {
  await planUnderLayout(store, input, undefined);
}

/** A build as planned by a release whose current layout was `requestLayout` (unset: before layouts were recorded). */
export async function planUnderLayout(store: ObjectStore, input: BuildConfigInput, requestLayout: RequestLayout | undefined): Promise<void> {
  const config = parseBuildConfig(input);
  await putJson(store, buildLayout(config.buildId).config, storedConfigOf(config, requestLayout));
}
