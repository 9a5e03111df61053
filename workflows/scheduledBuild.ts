/**
 * What a schedule starts: the configured build, written under a dated prefix
 * (`<output>/<YYYY-MM-DD>/<buildId>/`) for the run's nominal time — so a backfilled run for
 * 2026-11-01 lands under 2026-11-01 — sharing the model-call cache of the base output, so only new
 * source records and samples whose prompts changed reach the model.
 */
import { executeChild, workflowInfo } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { scheduledRunWorkflowId } from '../domain/buildWorkflowId.js';
import type { BuildReport } from '../output/contracts/buildReport.js';
import { buildDataset } from './buildDataset.js';
import { buildConfigInput } from './configInput.js';

/** Set by Temporal on every workflow a schedule starts: the nominal (not actual) start time. */
const SCHEDULED_START_TIME = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

export async function scheduledBuild(input: unknown): Promise<BuildReport> {
  const config = await buildConfigInput(input);
  const info = workflowInfo();
  const nominal = info.typedSearchAttributes.get(SCHEDULED_START_TIME) ?? info.startTime;
  const date = nominal.toISOString().slice(0, 10);
  const dated = { ...config, output: `${config.output.replace(/\/+$/, '')}/${date}`, cacheUri: config.cacheUri ?? config.output };
  return executeChild(buildDataset, { workflowId: scheduledRunWorkflowId(config.buildId, date), args: [dated] });
}
