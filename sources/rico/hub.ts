/**
 * RICO as the Hugging Face Hub ships it, rootsautomation/RICO-Screen2Words (its dataset card's
 * `dataset_info`): `data/{train,val,test}-*.parquet` with `screenId: int64`, `captions:
 * sequence<string>`, `view_hierarchy` (the release's `combined/<N>.json`, as a JSON string), `image`,
 * `image_icon`, `image_semantic: Image` and app metadata. The screenshot is `image`; the view
 * hierarchy's visible text is the grounding, as the release's JSON gives it. The Screen2Words
 * captions are not used: RICO's instructions are generated.
 */
import type { SourceConfigOf } from '../../config/sourceConfig.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { damaged, sourceSample, type SourceItem } from '../contract.js';
import { parquetRows, requireParquetFiles } from '../readers/hfRows.js';
import { visibleText } from './screenText.js';

export async function* ricoHubItems(store: ObjectStore, config: SourceConfigOf<'rico'>, sourceIndex: number): AsyncGenerator<SourceItem> {
  const files = await requireParquetFiles(store, {});
  for await (const row of parquetRows(store, files, { image: 'image', id: 'screenId' }, ['view_hierarchy'])) {
    if ('problem' in row) {
      yield row;
      continue;
    }
    const raw = row.values.view_hierarchy;
    let grounding: string | undefined;
    if (typeof raw === 'string' && raw !== '') {
      try {
        grounding = visibleText(JSON.parse(raw));
      } catch (err) {
        yield damaged(row.sourceId, 'json-malformed', `${row.sourceId}: view_hierarchy is not JSON (${(err as Error).message})`);
        continue;
      }
    }
    yield sourceSample('rico', row.sourceId, config.licenseNote, { sourceIndex, locator: row.locator }, { grounding });
  }
}
