/**
 * A config as a workflow receives it: parsed and defaulted outside the workflow sandbox (by the
 * resolveBuildConfig / resolveEvalConfig activities), stamped with the version of this shape. A
 * workflow reads only versions it knows, so a change of defaults or of the shape never changes how
 * a running workflow replays: it recorded the resolved config it ran with.
 */
export const RESOLVED_CONFIG_VERSION = 2;

/**
 * The versions this code reads: its own, and those running workflows recorded. 1: a build config
 * always carried `maxParallelShards` (4 unless set); from 2 it may be absent (the build sizes its
 * shards in flight from its endpoints: domain/sampleLanes.ts), which code reading only 1 would take
 * for a number.
 */
export const READ_CONFIG_VERSIONS: readonly number[] = [1, RESOLVED_CONFIG_VERSION];

export interface ResolvedConfig<T> {
  version: number;
  config: T;
}
