/**
 * CC3M as img2dataset writes it (webdataset tars with parquet side files, numbered folders, or a flat
 * folder of images): generated instructions, the caption as grounding. The reader is reader.ts.
 */
import { layoutField } from '../../config/sourceFields.js';
import { defineSource } from '../definition.js';

export const cc3mDefinition = defineSource({
  type: 'cc3m',
  fields: {
    /** Which img2dataset layout the root holds; 'auto' detects it. */
    layout: layoutField(['webdataset', 'files', 'flat']),
  },
  defaults: {
    dedupe: 'image',
    licenseNote: 'CC3M: images owned by their original publishers; captions CC BY 4.0 (Google)',
    image: {},
  },
  docs: {
    layout:
      "img2dataset `webdataset` (`00000.tar` with `{key}.jpg/.txt/.json` and `00000.parquet` beside it: planning reads only the parquet side files (keys, captions, statuses; failed downloads, which only the parquet lists, are counted by status in `rejects/source-filtered.json` as `img2dataset-failed_to_download`/`-failed_to_resize`), and a shard finds an image's byte range by seeking in the tar in the parquet's record order (img2dataset writes both in one order: ~2 ranged reads of 64 KiB per image), falling back to reading the tar's headers by range from the start (the whole tar when its images are smaller than 256 KiB) once per tar and worker when the tar is not in that order or is damaged; a tar without a readable parquet is streamed at planning instead), `files` (`00000/000000000.jpg|.txt|.json`) or `flat` (images at the root, optional `.txt`); `layout: auto` detects. `pixparse/cc3m-wds` (`cc3m-{train,validation}-NNNN.tar` of `<key>.jpg`, `<key>.txt`, no side files) is a `webdataset` streamed at planning",
    instruction: 'generated (Fig. 14)',
    hub: ['google-research-datasets/conceptual_captions (downloaded with img2dataset)', 'pixparse/cc3m-wds'],
  },
});
