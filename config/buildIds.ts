/**
 * The build ids the CLI derives from a config's buildId: an estimate's pilot
 * (`<buildId>-pilot-<N>`, `mmif estimate`) and a new version (`<buildId>-v<N>`, `mmif build
 * --new-version`). A derived id is a buildId too, parsed by the same schema (slug's ID_MAX), so a
 * config's own buildId must leave room for the longest suffix: the limit a user meets,
 * USER_BUILD_ID_MAX, is derived here from ID_MAX and the largest pilot and version, never written
 * by hand. readConfig and `mmif init` check it, so `validate` refuses an id that would break
 * `estimate` or `--new-version` later.
 */
import { ID_MAX } from './slug.js';

/** The largest `mmif estimate --pilot N` (a pilot is a sample of the build, not the build). */
export const MAX_PILOT = 99_999;
/** The highest version `mmif build --new-version` picks. */
export const MAX_VERSION = 999;

export const pilotBuildId = (buildId: string, size: number) => `${buildId}-pilot-${size}`;
export const versionedBuildId = (base: string, version: number) => (version === 1 ? base : `${base}-v${version}`);

/** The longest buildId a config may give: ID_MAX less the longest suffix the CLI appends to it. */
export const USER_BUILD_ID_MAX = ID_MAX - Math.max(pilotBuildId('', MAX_PILOT).length, versionedBuildId('', MAX_VERSION).length);

/** Why a config's buildId is too long for the ids derived from it, or undefined. */
export function buildIdLengthProblem(buildId: string): string | undefined {
  if (buildId.length <= USER_BUILD_ID_MAX) return undefined;
  return (
    `buildId: ${buildId.length} characters, at most ${USER_BUILD_ID_MAX}: the ids derived from it ` +
    `(${pilotBuildId('<buildId>', MAX_PILOT)}, ${versionedBuildId('<buildId>', MAX_VERSION)}) must stay within ${ID_MAX}`
  );
}
