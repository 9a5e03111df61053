/**
 * Images a dataset names by a path under its root (LLaVA's `image`, ChartQA's `imgname`, ImageFolder's
 * `file_name`), located by `{path}` and read from the source's store. The one place such a path
 * becomes bytes, so it is the hook for where else an image may live: issue 29's zip archives read in
 * place extend `read` (a path that is not a file is looked up in the `.zip` and `.tar` files under the root),
 * and every source that names images by path gains it at once. A path read from an extracted gzip'd
 * tar (extractedView.ts) has that archive and member as its origin.
 */
import { SampleRejection } from '../../domain/rejection.js';
import type { ImageLocator } from '../../domain/sample.js';
import { StoreError, type ObjectStore } from '../../storage/objectStore.js';
import type { ImageOrigin } from '../../domain/sample.js';
import { locatorField, type SourceReader } from '../contract.js';
import { ZipArchiveError, ZipMemberError } from './zipArchive.js';
import { archiveFolderOf } from './archiveFolder.js';
import { TarError } from './tar.js';
import { extractedOrigin } from './extractedView.js';

/** The locator of the image at `path` (a key under the root, already checked by datasetKey). */
export function pathLocator(path: string): ImageLocator {
  return { path };
}

export interface NamedImages {
  read(locator: ImageLocator): Promise<Buffer>;
  origin(locator: ImageLocator): ImageOrigin;
}

export function namedImages(store: ObjectStore): NamedImages {
  /** Where this process found paths that are not files (origin reports the archive and member). */
  const inArchives = new Map<string, ImageOrigin>();
  return {
    async read(locator) {
      const path = locatorField(locator, 'path', 'string');
      const body = await store.get(path);
      if (body) return body;
      const folder = await archiveFolderOf(store);
      const found = await folder.find(path);
      // A missing file is an ordinary dataset defect: StoreError 'not-found' rejects that sample alone.
      if (!found) {
        const notSearched = await folder.unreadable(path);
        const unreadable = notSearched.length > 0 ? ` (not searched: ${notSearched.join('; ')})` : '';
        throw new StoreError(`image '${path}' is named by the dataset but is neither a file in ${store.root} nor in a .zip or .tar under it${unreadable}`, path, 'not-found');
      }
      try {
        const bytes = await found.archive.read(found.member);
        inArchives.set(path, { file: found.archive.key, member: found.member });
        return bytes;
      } catch (err) {
        // An encrypted or corrupt member rejects its sample by name; the archive's other members are still read.
        if (err instanceof ZipMemberError) throw new SampleRejection(`${err.code === 'corrupt' ? 'corrupt' : `zip-${err.code}`}: ${err.message}`);
        if (err instanceof ZipArchiveError || err instanceof TarError) throw new SampleRejection(`corrupt: ${err.message}`);
        throw err;
      }
    },
    origin: (locator) => {
      const path = locatorField(locator, 'path', 'string');
      return inArchives.get(path) ?? extractedOrigin(store, path) ?? { file: path };
    },
  };
}

/** A reader whose images are all named by path: its own segments and description, its images read by namedImages. */
export function pathNamedReader(store: ObjectStore, own: Pick<SourceReader, 'segments' | 'describe'>): SourceReader {
  const images = namedImages(store);
  return { ...own, readImage: (ref) => images.read(ref.locator), origin: images.origin };
}
