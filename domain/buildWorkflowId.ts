/**
 * The workflow ids a build runs under. `mmif status` and `mmif resume` find a build by its buildId,
 * used as the workflow id; a schedule's dated run (workflows/scheduledBuild.ts) runs the same
 * buildId under `<buildId>@<YYYY-MM-DD>`, one workflow per nominal date.
 */

/** The workflow id of a schedule's run for one nominal date (YYYY-MM-DD). */
export const scheduledRunWorkflowId = (buildId: string, date: string) => `${buildId}@${date}`;

const SCHEDULED_RUN_SUFFIX = /^@\d{4}-\d{2}-\d{2}$/;

/**
 * Why a build cannot run under this workflow id, or undefined when it can: a build started under
 * another id (`temporal workflow start --workflow-id X`) would run, but `mmif status <buildId>` and
 * `mmif resume` would never find it.
 */
export function workflowIdRefusal(workflowId: string, buildId: string): string | undefined {
  if (workflowId === buildId) return undefined;
  if (workflowId.startsWith(buildId) && SCHEDULED_RUN_SUFFIX.test(workflowId.slice(buildId.length))) return undefined;
  return `workflow id '${workflowId}' is not the config's buildId '${buildId}': start the build with --workflow-id ${buildId} (mmif status and resume find builds by their buildId)`;
}
