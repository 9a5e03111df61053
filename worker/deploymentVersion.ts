/**
 * The Worker Deployment Version a worker registers as (Temporal Worker Versioning): builds are pinned
 * to the version that started them, so a deploy never changes the code under a running build
 * (docs/adr/0008-worker-versioning.md, docs/operations.md "Rolling out a new version").
 * The deployment is MMIF_DEPLOYMENT (default "mmif"); the build id is MMIF_BUILD_ID or a hash of the
 * workflow bundle this worker loads, so two workers share a build id exactly when they run the same
 * workflow code. The Temporal Worker Controller's names (TEMPORAL_DEPLOYMENT_NAME,
 * TEMPORAL_WORKER_BUILD_ID, which it sets on the pods it runs) are read when the MMIF_ ones are unset.
 * A deployment with no current version and no manager (a fresh server, a first deploy) takes this
 * worker's version as current once the server has seen it poll, so a newcomer's builds run out of the
 * box; replacing a current version is the operator's (or the controller's) step.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { toCanonicalString, type WorkerDeploymentVersion } from '@temporalio/common';
import type { NativeConnection, Worker, WorkflowBundleWithSourceMap } from '@temporalio/worker';

export const DEFAULT_DEPLOYMENT = 'mmif';

/** Hex digits of the bundle's sha256 kept in a build id: short enough to type, far from colliding. */
const BUILD_ID_HEX = 16;

/** How often a starting worker looks whether the server has seen it poll yet. */
const REGISTRATION_POLL_MS = 200;

export async function workerDeploymentVersion(bundle: WorkflowBundleWithSourceMap | { codePath: string }, env: NodeJS.ProcessEnv = process.env): Promise<WorkerDeploymentVersion> {
  const buildId =
    env.MMIF_BUILD_ID ||
    env.TEMPORAL_WORKER_BUILD_ID ||
    createHash('sha256')
      .update('code' in bundle ? bundle.code : await readFile(bundle.codePath))
      .digest('hex')
      .slice(0, BUILD_ID_HEX);
  return { deploymentName: env.MMIF_DEPLOYMENT || env.TEMPORAL_DEPLOYMENT_NAME || DEFAULT_DEPLOYMENT, buildId };
}

type WorkflowService = NativeConnection['workflowService'];

/** What `becomeCurrentIfNone` found: this version made current, a version current already, or a manager owning the routing. */
type Currency = { made: true } | { made: false; current: WorkerDeploymentVersion } | { made: false; manager: string };

/**
 * Makes `version` its deployment's current version if the deployment has none and no manager identity
 * (a manager, such as the Worker Controller, owns the routing), once the server has seen the version
 * poll (before that it is not part of the deployment). Gives up quietly when the worker stops first
 * (`finished`). The describe's conflict token guards the change: of two first
 * workers starting at once, one sets it and the other finds it set.
 */
export async function becomeCurrentIfNone(service: WorkflowService, namespace: string, version: WorkerDeploymentVersion, finished: () => boolean): Promise<Currency | undefined> {
  const { deploymentName, buildId } = version;
  while (!finished()) {
    const described = await service.describeWorkerDeployment({ namespace, deploymentName }).catch((err: { code?: number }) => {
      if (err.code === NOT_FOUND) return undefined; // no worker of this deployment has polled yet
      throw err;
    });
    const info = described?.workerDeploymentInfo;
    const current = info?.routingConfig?.currentDeploymentVersion;
    if (info?.managerIdentity) return { made: false, manager: info.managerIdentity };
    if (current?.buildId) return current.buildId === buildId ? { made: false, current: version } : { made: false, current: { deploymentName, buildId: current.buildId } };
    if (info?.versionSummaries?.some((v) => v.deploymentVersion?.buildId === buildId)) {
      const set = await service
        .setWorkerDeploymentCurrentVersion({ namespace, deploymentName, buildId, conflictToken: described!.conflictToken, identity: `mmif worker ${toCanonicalString(version)}` })
        .then(
          () => true,
          (err: { code?: number }) => {
            if (err.code === FAILED_PRECONDITION || err.code === ABORTED) return false; // another worker changed it: look again
            throw err;
          },
        );
      if (set) return { made: true };
    }
    await new Promise((r) => setTimeout(r, REGISTRATION_POLL_MS).unref());
  }
  return undefined;
}

/** gRPC status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html). */
const NOT_FOUND = 5;
const FAILED_PRECONDITION = 9;
const ABORTED = 10;

/** The worker's one line about its version: current, made current, or waiting for an operator to make it current. */
export function currencyLine(version: WorkerDeploymentVersion, currency: Currency): string {
  const own = toCanonicalString(version);
  if (currency.made) return `worker version ${own} is now current (the deployment had none): new builds run on it`;
  if ('manager' in currency) return `worker version ${own}: ${currency.manager} manages which version is current`;
  if (currency.current.buildId === version.buildId) return `worker version ${own} is current`;
  return (
    `worker version ${own} is not current: new builds start on ${toCanonicalString(currency.current)} until ` +
    `\`temporal worker deployment set-current-version --deployment-name ${version.deploymentName} --build-id ${version.buildId}\``
  );
}

/** Worker options that register `version`, its workflows pinned unless declared otherwise (workflows/index.ts). */
export const versionedWorkerOptions = (version: WorkerDeploymentVersion) =>
  ({ workerDeploymentOptions: { useWorkerVersioning: true, version, defaultVersioningBehavior: 'PINNED' } }) as const;

/** For a worker made with Worker.create directly (tests, benchmarks): its version made current when its deployment has none. */
export function currentOnceSeen(connection: NativeConnection, namespace: string, version: WorkerDeploymentVersion, worker: Worker): void {
  void becomeCurrentIfNone(connection.workflowService, namespace, version, () => ['STOPPED', 'FAILED'].includes(worker.getState())).catch(() => undefined);
}
