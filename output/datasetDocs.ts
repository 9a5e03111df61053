/**
 * What a user finds beside the data: the quality report (`quality.json`) and the dataset card
 * (`README.md`), written from the build report and the committed manifests when a build finishes.
 * Rewritten only when their bytes change, so re-finalizing a finished build writes nothing.
 */
import type { BuildConfig } from '../config/buildConfig.js';
import { getJson, putIfChanged, type ObjectStore } from '../storage/objectStore.js';
import type { BuildReport } from './buildReport.js';
import { datasetCard } from './datasetCard.js';
import type { BuildLayout } from './layout.js';
import { writeQualityReport } from './qualityReport.js';

export async function writeDatasetDocs(store: ObjectStore, layout: BuildLayout, report: BuildReport, shardCount: number): Promise<void> {
  const config = (await getJson<{ config: BuildConfig }>(store, layout.config))?.config;
  const quality = await writeQualityReport(store, layout, report, shardCount, config);
  await putIfChanged(store, layout.datasetCard, datasetCard({ report, quality, config }), 'text/markdown');
}
