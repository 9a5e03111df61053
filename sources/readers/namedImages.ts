/**
 * Images a dataset names by a path under its root (LLaVA's `image`, ChartQA's `imgname`, ImageFolder's
 * `file_name`), located by `{path}` and read from the source's store. The one place such a path
 * becomes bytes, so it is the hook for where else an image may live: issue 29's zip archives read in
 * place extend `read` (a path that is not a file is looked up in the `.zip` files under the root),
 * and every source that names images by path gains it at once.
 */
import type { ImageLocator } from '../../domain/sample.js';
import { StoreError, type ObjectStore } from '../../storage/objectStore.js';
import { locatorField, type ImageOrigin, type SourceReader } from '../contract.js';

/** The locator of the image at `path` (a key under the root, already checked by datasetKey). */
export function pathLocator(path: string): ImageLocator {
  return { path };
}

export interface NamedImages {
  read(locator: ImageLocator): Promise<Buffer>;
  origin(locator: ImageLocator): ImageOrigin;
}

export function namedImages(store: ObjectStore): NamedImages {
  return {
    async read(locator) {
      const path = locatorField(locator, 'path', 'string');
      const body = await store.get(path);
      // A missing file is an ordinary dataset defect: StoreError 'not-found' rejects that sample alone.
      if (!body) throw new StoreError(`image '${path}' is named by the dataset but is not in ${store.root}`, path, 'not-found');
      return body;
    },
    origin: (locator) => ({ file: locatorField(locator, 'path', 'string') }),
  };
}

/** A reader whose images are all named by path: its own segments and description, its images read by namedImages. */
export function pathNamedReader(store: ObjectStore, own: Pick<SourceReader, 'segments' | 'describe'>): SourceReader {
  const images = namedImages(store);
  return { ...own, readImage: (ref) => images.read(ref.locator), origin: images.origin };
}
