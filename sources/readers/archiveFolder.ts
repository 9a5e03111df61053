/**
 * Images that a dataset's records name by path but ships inside `.zip` archives under its root:
 * Geo170K's `images.zip` beside `qa_tuning.json` (records name `images/geoqa_plus/1.png`), ALLaVA's
 * `allava_laion/image_chunks/images_<n>.zip` (records name `allava_laion/images/<id>.jpeg`; the
 * release's own download script unpacks them with `unzip -j`, dropping the members' folders). A path
 * that is not a file is looked up here: every archive under the root is opened once (its central
 * directory, zipArchive.ts) and the member found by the rules of `find`.
 */
import { LruCache } from '../../domain/lruCache.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { ZipArchive, ZipArchiveError } from './zipArchive.js';

/** A path's place inside an archive. */
export interface ZipMemberRef {
  archive: ZipArchive;
  member: string;
}

export class ZipFolder {
  private constructor(
    private readonly archives: readonly ZipArchive[],
    /** Archives that could not be opened, with why: named when a path is not found. */
    readonly unreadable: readonly string[],
  ) {}

  /** Opens every `.zip` under the store's root, in key order; one that cannot be read is set aside, named in `unreadable`. */
  static async open(store: ObjectStore): Promise<ZipFolder> {
    const archives: ZipArchive[] = [];
    const unreadable: string[] = [];
    for await (const object of store.list('')) {
      if (!object.key.toLowerCase().endsWith('.zip')) continue;
      try {
        archives.push(await ZipArchive.open(store, object.key, object.size));
      } catch (err) {
        if (!(err instanceof ZipArchiveError)) throw err;
        unreadable.push(err.message);
      }
    }
    return new ZipFolder(archives, unreadable);
  }

  get size(): number {
    return this.archives.length;
  }

  /**
   * The member standing for `path` (a key under the root), first archive in key order winning:
   *  1. `path` is `<prefix>/<member>` where prefix is the archive's own name without `.zip`
   *     (`images.zip` holding `geoqa_plus/1.png` for `images/geoqa_plus/1.png`), its folder, or any
   *     folder above it up to the root (`images.zip` holding `images/geoqa_plus/1.png`);
   *  2. else the one member with the path's file name, in an archive under the path's top folder
   *     (ALLaVA: `allava_laion/images/1.jpeg` in `allava_laion/image_chunks/images_0.zip`).
   */
  find(path: string): ZipMemberRef | undefined {
    for (const archive of this.archives) {
      for (const prefix of prefixesOf(archive.key)) {
        const member = prefix === '' ? path : path.startsWith(`${prefix}/`) ? path.slice(prefix.length + 1) : undefined;
        if (member !== undefined && archive.has(member)) return { archive, member };
      }
    }
    const slash = path.indexOf('/');
    const top = slash === -1 ? '' : path.slice(0, slash + 1);
    const baseName = path.slice(path.lastIndexOf('/') + 1);
    for (const archive of this.archives) {
      if (!archive.key.startsWith(top)) continue;
      const member = archive.memberByBaseName(baseName);
      if (member !== undefined) return { archive, member };
    }
    return undefined;
  }
}

/** `a/b/images.zip` → `a/b/images`, `a/b`, `a`, ``. */
function prefixesOf(archiveKey: string): string[] {
  const prefixes = [archiveKey.replace(/\.zip$/i, '')];
  for (let dir = archiveKey; dir.includes('/');) {
    dir = dir.slice(0, dir.lastIndexOf('/'));
    prefixes.push(dir);
  }
  return [...prefixes, ''];
}

/** One ZipFolder per source root and process, opened on first need (a worker reads many shards of one source). */
const folders = new LruCache<Promise<ZipFolder>>(8);

export function zipFolderOf(store: ObjectStore): Promise<ZipFolder> {
  const opening = folders.get(store.root, () => ZipFolder.open(store));
  opening.catch(() => folders.deleteIf(store.root, opening));
  return opening;
}
