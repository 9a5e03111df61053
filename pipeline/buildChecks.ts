/**
 * What can be checked about a build before anything starts: the config against the one an existing
 * build of the same id was planned with, and each source's layout (its first segment read, which is
 * where a reader finds its root and layout or says which it expected). `mmif validate` runs it in the
 * CLI; `mmif build` runs it on a worker of the build's task queue (workflows/buildChecks.ts), where
 * the data will be read. Every problem is listed, not just the first.
 */
import type { BuildConfig } from '../config/buildConfig.js';
import { openSources } from '../sources/source.js';
import { buildLayout } from '../storage/buildLayout.js';
import { openStore } from '../storage/openStore.js';
import { sameStoredConfig } from './planBuild.js';

export async function buildProblems(config: BuildConfig): Promise<string[]> {
  const problems: string[] = [];
  try {
    await sameStoredConfig(config, openStore(config.output, config.s3), buildLayout(config.buildId));
  } catch (err) {
    problems.push((err as Error).message);
  }
  const readers = openSources(config.sources, config.s3);
  const sourceProblems = await Promise.all(
    readers.map(async (reader, i) => {
      try {
        // The first segment only: enough to find the layout, never the whole dataset.
        const segments = reader.segments()[Symbol.asyncIterator]();
        await segments.next();
        await segments.return?.();
        return [];
      } catch (err) {
        return [`sources[${i}] (${config.sources[i]!.type}): ${(err as Error).message}`];
      }
    }),
  );
  return [...problems, ...sourceProblems.flat()];
}
