/**
 * A config as a workflow receives it: parsed and defaulted outside the workflow sandbox (by the
 * resolveBuildConfig / resolveEvalConfig activities), stamped with the version of this shape. A
 * workflow reads only versions it knows, so a change of defaults or of the shape never changes how
 * a running workflow replays: it recorded the resolved config it ran with.
 */
export const RESOLVED_CONFIG_VERSION = 1;

export interface ResolvedConfig<T> {
  version: typeof RESOLVED_CONFIG_VERSION;
  config: T;
}
