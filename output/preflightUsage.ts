/**
 * The pre-flight's requests are paid calls too: each answered one is recorded under the build (one
 * object per check, so a later check with another key adds to it rather than replacing it) and the
 * build report shows them as usage stage `preflight`.
 */
import { costOf, type PriceTable } from '../llm/pricing.js';
import type { PreflightOutcome } from '../llm/preflight.js';
import { getJson, putJson, type ObjectStore } from '../storage/objectStore.js';
import type { BuildLayout } from '../storage/buildLayout.js';
import { addUsage, emptyUsage, type StageUsage } from './manifest.js';

export async function recordPreflightUsage(store: ObjectStore, layout: BuildLayout, outcomes: readonly PreflightOutcome[], prices: PriceTable): Promise<void> {
  for (const { checkId, usage } of outcomes) {
    if (!usage) continue;
    const record: StageUsage = { ...emptyUsage(), requests: 1, promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, costUsd: costOf({ ...usage, batch: false }, prices) };
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
