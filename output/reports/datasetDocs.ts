/**
 * What a user finds beside the data: the quality report (`quality.json`), the dataset card
 * (`README.md`) and a viewer page (`viewer.html`), written from the build report and the committed
 * shards when a build finishes.
 * Rewritten only when their bytes change, so re-finalizing a finished build writes nothing.
 */
import type { BuildConfig } from '../../config/buildConfig.js';
import { getJson, putIfChanged, type ObjectStore } from '../../storage/objectStore.js';
import type { BuildReport } from '../contracts/buildReport.js';
import { datasetCard } from './datasetCard.js';
import type { BuildLayout } from '../../storage/buildLayout.js';
import { writeQualityReport } from './qualityReport.js';
import { writeViewer } from '../viewer/viewer.js';
import { summaryPanel } from './viewerSummary.js';

export async function writeDatasetDocs(store: ObjectStore, layout: BuildLayout, report: BuildReport, shardCount: number): Promise<void> {
  const config = (await getJson<{ config: BuildConfig }>(store, layout.config))?.config;
  const quality = await writeQualityReport(store, layout, report, shardCount, config);
  await putIfChanged(store, layout.datasetCard, datasetCard({ report, quality, config }), 'text/markdown');
  // Every record: the page loads them a page at a time. It sits at the dataset root, so a record's
  // image path is already relative to it.
  await writeViewer(store, layout, {
    pageName: layout.viewer.slice(layout.root.length + 1),
    summary: summaryPanel({ report, quality }),
    imageSrc: (imagePath) => imagePath.split('/').map(encodeURIComponent).join('/'),
    put: (file) => putIfChanged(store, `${layout.root}/${file.path}`, file.body, file.contentType),
  });
}
