/**
 * One run of a build, as the CLI follows it: from the run it started (or found) through its
 * continue-as-new successors, never another start under the same build id; and how it ended, as the
 * one line the user reads (no stack, no task token) and the exit code that goes with it.
 */
import type { Client, WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { BuildReport, SourceAccount } from '../output/contracts/buildReport.js';
import type { BuildPhase, BuildProgress } from '../workflows/buildProgress.js';
import { CliError, EXIT } from './exitCodes.js';
import { BUDGET_EXHAUSTED, exitCodeFor, failedShardsOf, failureReport, rootFailure, SHARDS_FAILED, type Failure } from './failures.js';
import { withRunningShards, type LiveProgress } from './liveProgress.js';
import { forBuild } from './temporalClient.js';
import { noAnswerFrom } from './temporalOutage.js';

/** The phase a closed run shows, whatever its progress said last (a build that failed planning still says `planning`). */
export function closedPhase(status: string): BuildPhase | undefined {
  if (status === 'COMPLETED') return 'done';
  if (status === 'CANCELLED') return 'cancelled';
  if (status === 'FAILED' || status === 'TERMINATED' || status === 'TIMED_OUT') return 'failed';
  return undefined;
}

/** `GetWorkflowExecutionHistory`'s filter for the close event only (temporal/api enums/v1/workflow.proto, HistoryEventFilterType). */
const CLOSE_EVENT_ONLY = 2;

/** `TASK_QUEUE_TYPE_WORKFLOW` (temporal/api enums/v1/task_queue.proto): the pollers that would run a build's workflow tasks. */
const WORKFLOW_TASK_QUEUE = 1;

/** Whether a worker polls `taskQueue` for workflow tasks (DescribeTaskQueue's pollers: those seen in the last minutes). */
export async function hasPollers(client: Client, taskQueue: string): Promise<boolean> {
  const { pollers } = await client.workflowService.describeTaskQueue({ namespace: client.options.namespace, taskQueue: { name: taskQueue }, taskQueueType: WORKFLOW_TASK_QUEUE });
  return (pollers?.length ?? 0) > 0;
}

/** The line for a build no worker picks up: which queue, and how to start a worker on it. */
export const noWorkerLine = (taskQueue: string) =>
  `no worker polls task queue ${taskQueue}: the build waits until one does; start one with \`MMIF_TASK_QUEUE=${taskQueue} mmif worker\` (with the build's OPENAI_BASE_URL and keys)`;

/** A query to a closed run needs a worker to replay it; without one the screen shows no progress rather than hang. */
const QUERY_TIMEOUT_MS = 5_000;

/**
 * How a followed run ended, when not with its report: the line, the exit code and the closed status;
 * for a build its budget stopped, the report it wrote (its summary shows what was paid and kept).
 */
export class RunEnded extends CliError {
  constructor(
    message: string,
    exitCode: number,
    readonly status: string,
    readonly budgetStopped?: BuildReport,
  ) {
    super(message, exitCode);
  }
}

/** The stage whose rejections are the input's own: the image could not be read, decoded or used (config/stages.ts). */
const INPUT_STAGE = 'image';

/**
 * A completed build that accepted nothing for its input's sake: planning refused every record it
 * read (a richness rule, a question filter, damaged units), or it planned samples and every one failed
 * on its input (every image missing, unreadable or refused by the image checks). The one line it ends
 * with, exit 1, else undefined. It completed, but its dataset is empty for a reason the user must fix.
 */
export function acceptedNothing(buildId: string, report: BuildReport): RunEnded | undefined {
  const sum = (count: (a: SourceAccount) => number) => report.accounting.reduce((n, a) => n + count(a), 0);
  const [read, planned, accepted] = [sum((a) => a.read), sum((a) => a.planned), sum((a) => a.accepted)];
  if (accepted > 0) return undefined;
  if (planned === 0 && read > 0) {
    const refused = tally(report.accounting.flatMap((a) => [prefixed('', a.notSelected), prefixed('filtered:', a.filtered), prefixed('problem:', a.problems)]));
    const message = `build ${buildId} accepted nothing: planning refused every one of the ${read} records its sources gave (${refused}); the candidates and their reasons are in richness/ and rejects/ under ${report.datasetRoot}`;
    return new RunEnded(message, EXIT.failed, 'COMPLETED');
  }
  const stages = Object.entries(report.rejectsByStage).filter(([, n]) => n > 0);
  if (planned === 0 || stages.length === 0 || stages.some(([stage]) => stage !== INPUT_STAGE)) return undefined;
  const named = tally(report.accounting.map((a) => a.rejected));
  const message = `build ${buildId} accepted nothing: every one of its ${planned} planned samples failed on its input (${named}); the reasons per sample are in rejects/ under ${report.datasetRoot}`;
  return new RunEnded(message, EXIT.failed, 'COMPLETED');
}

const prefixed = (prefix: string, counts: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(counts).map(([reason, n]) => [`${prefix}${reason}`, n]));

/** `reason n, reason n, reason n, ...`: the three largest counts summed over `counts`. */
function tally(counts: Array<Record<string, number>>): string {
  const reasons = new Map<string, number>();
  for (const c of counts) for (const [reason, n] of Object.entries(c)) if (n > 0) reasons.set(reason, (reasons.get(reason) ?? 0) + n);
  const top = [...reasons].sort((a, b) => b[1] - a[1]);
  return (
    top
      .slice(0, 3)
      .map(([reason, n]) => `${reason} ${n}`)
      .join(', ') + (top.length > 3 ? ', ...' : '')
  );
}

export class BuildRun {
  constructor(
    private readonly client: Client,
    readonly buildId: string,
    /** The run to follow; unset: the latest run of the build id. */
    private runId?: string,
  ) {}

  /** The config the followed run was started with. */
  startedConfig(): Promise<unknown> {
    return originalConfig(this.handle());
  }

  private handle(): WorkflowHandle {
    return this.client.workflow.getHandle(this.buildId, this.runId);
  }

  /** The followed run's description, moved on to its successor when it continued as new. */
  async describe(): Promise<WorkflowExecutionDescription> {
    for (;;) {
      const description = await forBuild(this.buildId, () => this.handle().describe());
      this.runId = description.runId;
      if (description.status.name !== 'CONTINUED_AS_NEW') return description;
      this.runId = await this.successor(description.runId);
    }
  }

  /** The run a continued-as-new run handed over to, from its close event. */
  private async successor(runId: string): Promise<string> {
    const response = await this.client.workflowService.getWorkflowExecutionHistory({
      namespace: this.client.options.namespace,
      execution: { workflowId: this.buildId, runId },
      historyEventFilterType: CLOSE_EVENT_ONLY,
      waitNewEvent: true,
    });
    const next = response.history?.events?.[0]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!next) throw new Error(`run ${runId} of ${this.buildId} continued as new without naming its successor`);
    return next;
  }

  /** Whether a worker polls the task queue the followed run's workflow tasks go to. */
  async hasWorker(description: WorkflowExecutionDescription): Promise<boolean> {
    return hasPollers(this.client, description.taskQueue);
  }

  /**
   * The run's progress with its running shards' live counters, or undefined when no worker answers
   * (a closed run with no worker to replay it).
   */
  async progress(): Promise<LiveProgress | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), QUERY_TIMEOUT_MS)));
    const live = async () => {
      const progress = await this.handle()
        .query<BuildProgress>('progress')
        .catch(() => undefined);
      return progress && withRunningShards(this.client.workflow, progress);
    };
    try {
      return await Promise.race([live(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * How the closed run ended: its report when it completed; otherwise a CliError carrying the one
   * line (`build <id> failed: <cause>`) and the exit code (2 for a config-class cause, else 1).
   */
  async report(description: WorkflowExecutionDescription): Promise<BuildReport> {
    const status = description.status.name;
    const outcome = this.handle().result() as Promise<BuildReport>;
    if (status === 'COMPLETED') return outcome;
    if (status === 'CANCELLED')
      throw new RunEnded(`build ${this.buildId} was cancelled (committed shards stay valid; \`mmif resume ${this.buildId}\` continues it)`, EXIT.failed, status);
    // How the run failed; a server that did not answer says nothing of the run (thrown: the follower asks again).
    const ended = await outcome.then(
      () => undefined,
      (err: unknown) => {
        if (noAnswerFrom(err)) throw err;
        return err;
      },
    );
    if (status === 'TERMINATED') throw new RunEnded(`build ${this.buildId} was terminated${terminationReason(ended)}`, EXIT.failed, status);
    if (status === 'TIMED_OUT') throw new RunEnded(`build ${this.buildId} timed out`, EXIT.failed, status);
    const failure: Failure = ended === undefined ? { message: 'failed' } : rootFailure(ended);
    const carried = failureReport(ended);
    const stopped = carried?.type === BUDGET_EXHAUSTED ? carried.report : undefined;
    throw new RunEnded(`build ${this.buildId} failed: ${failure.message}`, await this.exitCode(failure, failedShardsOf(ended)), status, stopped);
  }

  /**
   * The exit code of a failed run: 2 for an input error (failures.ts). A run whose shards failed has
   * no cause of its own (ShardsFailed): it exits 2 when every failed shard's workflow failed with an
   * input error (a key refused mid-build fails each shard with EndpointError), read from the shards'
   * own runs (`<buildId>/shard-<n>`, workflows/buildDataset.ts); else 1.
   */
  private async exitCode(failure: Failure, shards: number[]): Promise<number> {
    if (failure.type !== SHARDS_FAILED || shards.length === 0) return exitCodeFor(failure);
    const codes = await Promise.all(
      shards.map((shard) =>
        this.client.workflow
          .getHandle(`${this.buildId}/shard-${shard}`)
          .result()
          .then(
            () => EXIT.failed,
            (err: unknown) => exitCodeFor(rootFailure(err)),
          ),
      ),
    );
    return codes.every((code) => code === EXIT.usage) ? EXIT.usage : EXIT.failed;
  }
}

function terminationReason(ended: unknown): string {
  const reason = ended === undefined ? '' : rootFailure(ended).message;
  return reason && !/^Workflow execution terminated$/i.test(reason) ? `: ${reason}` : '';
}

/** The config the latest run was started with: the first argument of its first history event. */
export async function originalConfig(handle: WorkflowHandle): Promise<unknown> {
  const history = await handle.fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new CliError(`cannot find the config ${handle.workflowId} was started with`, EXIT.failed);
  return defaultPayloadConverter.fromPayload(payload);
}
