/**
 * `mmif build`'s checks, run where the build will run: on a worker of the build's task queue, with
 * that worker's environment (`OPENAI_BASE_URL`, keys) and its view of the data and the output. The
 * CLI starts this workflow before the build and shows its result; a problem starts no build. First
 * the sources' gzip'd tars are extracted (an activity without planning's time limit; a root whose
 * cache cannot be written is among the problems), then the config against an existing build, the sources' layouts and the output's write probe
 * (pipeline/planning/buildChecks.ts), then, with
 * `llm.preflight`, the same pre-flight the build runs before planning (`preflightEndpoints`), whose
 * passed checks are remembered in the model cache, so the build's own pre-flight makes no request.
 */
import { proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import type { PreflightOutcome } from '../llm/preflight.js';
import { archiveActivityOptions, pipelineActivityOptions } from './activityOptions.js';
import { buildConfigInput } from './configInput.js';

export interface BuildCheckResult {
  /** What would fail the build, one message each; empty when nothing did. */
  problems: string[];
  /** The endpoints checked, when there was no problem and `llm.preflight` is on. */
  preflight?: PreflightOutcome[];
}

export async function buildChecks(input: unknown): Promise<BuildCheckResult> {
  const config = await buildConfigInput(input);
  const { checkBuild, preflightEndpoints } = proxyActivities<typeof activities>(pipelineActivityOptions(config.retry));
  const { extractArchives } = proxyActivities<typeof activities>(archiveActivityOptions(config.retry));
  const problems = await checkBuild(input, await extractArchives(input));
  if (problems.length > 0 || !config.llm.preflight) return { problems };
  return { problems, preflight: await preflightEndpoints(input) };
}
