/**
 * What can be checked about a build before anything starts: the config against the one an existing
 * build of the same id was planned with, each source's layout (its first segment read, which is
 * where a reader finds its root and layout or says which it expected), and that the output can be
 * written. `mmif validate` runs it in the CLI; `mmif build` runs it on a worker of the build's task
 * queue (workflows/buildChecks.ts), where the data will be read and the output written. Every
 * problem is listed, not just the first. A source's gzip'd tars are extracted before, once
 * (sources/sourceArchives.ts extractEverySource): a source whose cache could not be written is
 * listed with that line, and its layout, which its archives would hold, is not looked for.
 */
import type { BuildConfig } from '../../config/buildConfig.js';
import { openSources } from '../../sources/source.js';
import type { Unextracted } from '../../sources/sourceArchives.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { openStore } from '../../storage/openStore.js';
import { OutputLocationError } from '../../storage/outputLocationError.js';
import { probeOutputLeavingNothing } from '../../storage/outputProbe.js';
import { sameStoredConfig } from './planBuild.js';

export async function buildProblems(config: BuildConfig, unextracted: readonly Unextracted[]): Promise<string[]> {
  const output = await outputProblems(config);
  const problems: string[] = [];
  // An output the build cannot write (a wrong key, a missing bucket) cannot be read for its stored
  // config either: its one line names the output and the cause; the read's bare SDK message would
  // say the same with no context.
  if (output.length === 0) {
    try {
      await sameStoredConfig(config, openStore(config.output, config.s3), buildLayout(config.buildId));
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  const readers = openSources(config.sources, config.s3);
  const sourceProblems = await Promise.all(
    readers.map(async (reader, i) => {
      const named = (message: string) => [`sources[${i}] (${config.sources[i]!.type}): ${message}`];
      const refused = unextracted.find((u) => u.source === i);
      if (refused) return named(refused.problem);
      try {
        // The first segment only: enough to find the layout, never the whole dataset.
        const segments = reader.segments()[Symbol.asyncIterator]();
        await segments.next();
        await segments.return?.();
        return [];
      } catch (err) {
        return named((err as Error).message);
      }
    }),
  );
  return [...problems, ...sourceProblems.flat(), ...output];
}

/**
 * The output's write probe (storage/outputProbe.ts), leaving nothing behind (the checks start
 * nothing, and may refuse the build): an output the build could not write is refused as a wrong
 * source is, before anything runs, whether or not the pre-flight (which probes it too) is on.
 */
async function outputProblems(config: BuildConfig): Promise<string[]> {
  try {
    await probeOutputLeavingNothing(openStore(config.output, config.s3));
    return [];
  } catch (err) {
    if (err instanceof OutputLocationError) return [err.message];
    throw err;
  }
}
