/**
 * What a user finds beside the data: the quality report (`quality.json`), the dataset card
 * (`README.md`) and a viewer page (`viewer.html`), written from the build report and the committed
 * shards when a build finishes.
 * Rewritten only when their bytes change, so re-finalizing a finished build writes nothing.
 */
import type { BuildConfig } from '../config/buildConfig.js';
import { getJson, putIfChanged, type ObjectStore } from '../storage/objectStore.js';
import type { BuildReport } from './buildReport.js';
import { datasetCard } from './datasetCard.js';
import type { BuildLayout } from '../storage/buildLayout.js';
import { writeQualityReport } from './qualityReport.js';
import { loadViewerRecords, viewerHtml } from './viewer.js';

/** Records per kind on the page a build writes; `mmif view --limit` shows more. */
const VIEWER_RECORDS = 200;

export async function writeDatasetDocs(store: ObjectStore, layout: BuildLayout, report: BuildReport, shardCount: number): Promise<void> {
  const config = (await getJson<{ config: BuildConfig }>(store, layout.config))?.config;
  const quality = await writeQualityReport(store, layout, report, shardCount, config);
  await putIfChanged(store, layout.datasetCard, datasetCard({ report, quality, config }), 'text/markdown');
  const records = await loadViewerRecords(store, layout, VIEWER_RECORDS);
  // The page sits at the dataset root, so a record's image path is already relative to it.
  const imageSrc = (imagePath: string) => imagePath.split('/').map(encodeURIComponent).join('/');
  if (records) await putIfChanged(store, layout.viewer, viewerHtml({ ...records, imageSrc }), 'text/html');
}
