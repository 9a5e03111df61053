/**
 * What a `mmif build --local` run leaves for `mmif status`: its dev server lives only as long as the
 * command, so afterwards no Temporal knows the build. The record says how the run ended and where
 * its output is (`build-report.json` there has the figures). Kept under `.mmif/local-builds/` in the
 * folder the command ran in.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { S3Options } from '../storage/openStore.js';

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

const recordFile = (buildId: string) => path.resolve('.mmif', 'local-builds', `${buildId}.json`);

export async function writeLocalRecord(record: LocalBuildRecord): Promise<void> {
  await mkdir(path.dirname(recordFile(record.buildId)), { recursive: true });
  await writeFile(recordFile(record.buildId), `${JSON.stringify(record, null, 2)}\n`);
}

export async function readLocalRecord(buildId: string): Promise<LocalBuildRecord | undefined> {
  try {
    return JSON.parse(await readFile(recordFile(buildId), 'utf8')) as LocalBuildRecord;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
