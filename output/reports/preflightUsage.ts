/**
 * The pre-flight's requests are paid calls too: each answered one is recorded under the build (one
 * object per check, so a later check with another key adds to it rather than replacing it) and the
 * build report shows them as usage stage `preflight`.
 */
import { costOf, type PriceOverrides } from '../../llm/pricing.js';
import type { PreflightOutcome } from '../../llm/preflight.js';
import { getJson, putJson, type ObjectStore } from '../../storage/objectStore.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import { addUsage, callUsage, emptyUsage } from '../commit/manifest.js';
import type { StageUsage } from '../contracts/manifest.js';

export async function recordPreflightUsage(store: ObjectStore, layout: BuildLayout, outcomes: readonly PreflightOutcome[], prices: PriceOverrides): Promise<void> {
  for (const { checkId, endpoint, usage } of outcomes) {
    if (!usage) continue;
    const cost = costOf({ ...usage, batch: false, baseUrl: endpoint }, prices);
    const record: StageUsage = callUsage({ ...usage, cached: false, batch: false, costUsd: cost.usd ?? 0, savedUsd: 0, costSource: cost.source });
    await putJson(store, layout.preflightUsage(checkId), record);
  }
}

/** The pre-flight usage of a build, or undefined when it made no request. */
export async function preflightUsage(store: ObjectStore, layout: BuildLayout): Promise<StageUsage | undefined> {
  let total: StageUsage | undefined;
  for await (const { key } of store.list(layout.preflightUsagePrefix)) {
    const usage = await getJson<StageUsage>(store, key);
    if (usage) addUsage((total ??= emptyUsage()), usage);
  }
  return total;
}
