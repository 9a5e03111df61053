/**
 * What a `mmif build --local` run leaves for `mmif status`: its dev server lives only as long as the
 * command, so afterwards no Temporal knows the build. The record says how the run ended and where
 * its output is (`build-report.json` there has the figures). Kept under `.mmif/local-builds/` in the
 * folder the command ran in, where `status <buildId>` looks for it (and in the folders above), and
 * beside the dataset (`_work/local-run.json`), where `status <dataset root>` finds it from any folder.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { S3Options } from '../storage/s3Store.js';
import { RunEnded } from './buildRun.js';
import { CliError } from './exitCodes.js';
import { buildLayout } from '../storage/buildLayout.js';
import { getJson, putJson } from '../storage/objectStore.js';
import { openStore } from '../storage/openStore.js';
import { s3FromEnv } from './s3FromEnv.js';

export interface LocalBuildRecord {
  buildId: string;
  runId?: string;
  /** The workflow status it closed with (COMPLETED, FAILED...), or `REFUSED` when its checks refused it before it started. */
  status: string;
  /** The one line the run ended with, when it did not complete. */
  failure?: string;
  exitCode: number;
  output: string;
  s3: S3Options;
  finishedAt: string;
}

const recordFile = (folder: string, buildId: string) => path.join(folder, '.mmif', 'local-builds', `${buildId}.json`);

async function writeLocalRecord(record: LocalBuildRecord): Promise<void> {
  const file = recordFile(process.cwd(), record.buildId);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(record, null, 2)}\n`);
  // Beside the dataset too; an output the build could not write (its refusal is the record's failure) keeps the copy above only.
  await putJson(openStore(record.output, record.s3), buildLayout(record.buildId).localRun, record).catch(() => undefined);
}

/** A path naming a dataset root (`out/my-build`, `/data/out/my-build`, `s3://bucket/out/my-build`), never a buildId (which has no `/`). */
export const isDatasetRoot = (arg: string) => arg.includes('/') || arg.includes(path.sep);

/** The record a --local run left beside its dataset root, read from any folder. */
export async function readLocalRecordAt(datasetRoot: string): Promise<LocalBuildRecord | undefined> {
  const root = datasetRoot.replace(/\/+$/, '');
  const buildId = root.slice(root.lastIndexOf('/') + 1);
  const output = root.slice(0, root.length - buildId.length - 1) || '.';
  const local = /^[a-z][a-z0-9+.-]*:\/\//i.test(output) ? output : path.resolve(output);
  return getJson<LocalBuildRecord>(openStore(local, s3FromEnv()), buildLayout(buildId).localRun);
}

/**
 * The record of `buildId` in this folder or the nearest folder above it that has one (as git finds
 * `.git`): `mmif status` run from a sub-folder of where the build ran (its output, say) finds it.
 */
export async function readLocalRecord(buildId: string): Promise<LocalBuildRecord | undefined> {
  for (let folder = process.cwd(); ; folder = path.dirname(folder)) {
    try {
      return JSON.parse(await readFile(recordFile(folder, buildId), 'utf8')) as LocalBuildRecord;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (path.dirname(folder) === folder) return undefined;
  }
}

/** What to do when no record is found here and no Temporal server knows the build. */
export const LOCAL_RECORD_HINT = (buildId: string) =>
  `a \`mmif build --local\` build is known from the folder it ran in (run \`mmif status ${buildId}\` there or in a folder below it) or from its dataset root, in any folder: \`mmif status <output>/${buildId}\``;

/**
 * Runs a --local build (`mmif build --local`, `mmif quickstart`) and records how it ended for
 * `mmif status` (its server goes with this process): a run that ended throws RunEnded with its status.
 */
export async function recordedLocally(config: { buildId: string; output: string; s3?: S3Options }, build: () => Promise<number>): Promise<number> {
  const record = { buildId: config.buildId, output: config.output, s3: config.s3 ?? {} };
  const finishedAt = () => new Date().toISOString();
  try {
    const code = await build();
    await writeLocalRecord({ ...record, status: 'COMPLETED', exitCode: code, finishedAt: finishedAt() });
    return code;
  } catch (err) {
    if (err instanceof CliError) {
      const status = err instanceof RunEnded ? err.status : 'REFUSED';
      await writeLocalRecord({ ...record, status, failure: err.message, exitCode: err.exitCode, finishedAt: finishedAt() });
    }
    throw err;
  }
}
