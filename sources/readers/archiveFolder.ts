/**
 * Images that a dataset's records name by path but ships inside `.zip` (or uncompressed `.tar`)
 * archives under its root:
 * Geo170K's `images.zip` beside `qa_tuning.json` (records name `images/geoqa_plus/1.png`), ALLaVA's
 * `allava_laion/image_chunks/images_<n>.zip` (records name `allava_laion/images/<id>.jpeg`; the
 * release's own download script unpacks them with `unzip -j`, dropping the members' folders). A path
 * that is not a file is looked up here: every archive under the root is opened once (a zip's central
 * directory, zipArchive.ts; a tar's headers, tarArchive.ts) and the member found by the rules of `find`.
 */
import { LruCache } from '../../domain/lruCache.js';
import type { ObjectStore } from '../../storage/objectStore.js';
import { TarError } from './tar.js';
import { TarArchive } from './tarArchive.js';
import { ZipArchive, ZipArchiveError } from './zipArchive.js';

/** An archive read in place: its members' paths known, one member's bytes read on demand. */
export type MemberArchive = ZipArchive | TarArchive;

/** A path's place inside an archive. */
export interface ArchiveMemberRef {
  archive: MemberArchive;
  member: string;
}

export class ArchiveFolder {
  /** Per archive, each base name's one member, or null when several share it (built on first need). */
  private readonly byBaseName = new Map<MemberArchive, Map<string, string | null>>();

  private constructor(
    private readonly archives: readonly MemberArchive[],
    /** Archives that could not be opened, with why: named when a path is not found. */
    readonly unreadable: readonly string[],
  ) {}

  /** Opens every `.zip` and `.tar` under the store's root, in key order; one that cannot be read is set aside, named in `unreadable`. */
  static async open(store: ObjectStore): Promise<ArchiveFolder> {
    const archives: MemberArchive[] = [];
    const unreadable: string[] = [];
    for await (const object of store.list('')) {
      const name = object.key.toLowerCase();
      if (!name.endsWith('.zip') && !name.endsWith('.tar')) continue;
      try {
        archives.push(await (name.endsWith('.zip') ? ZipArchive : TarArchive).open(store, object.key, object.size));
      } catch (err) {
        if (!(err instanceof ZipArchiveError) && !(err instanceof TarError)) throw err;
        unreadable.push(err.message);
      }
    }
    return new ArchiveFolder(archives, unreadable);
  }

  get size(): number {
    return this.archives.length;
  }

  /**
   * The member standing for `path` (a key under the root), first archive in key order winning:
   *  1. `path` is `<prefix>/<member>` where prefix is the archive's own name without `.zip` or `.tar`
   *     (`images.zip` holding `geoqa_plus/1.png` for `images/geoqa_plus/1.png`), its folder, or any
   *     folder above it up to the root (`images.zip` holding `images/geoqa_plus/1.png`);
   *  2. else the one member with the path's file name, in an archive under the path's top folder
   *     (ALLaVA: `allava_laion/images/1.jpeg` in `allava_laion/image_chunks/images_0.zip`).
   */
  find(path: string): ArchiveMemberRef | undefined {
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
      const member = this.memberByBaseName(archive, baseName);
      if (member !== undefined) return { archive, member };
    }
    return undefined;
  }

  /** The one member named `baseName` in any folder of the archive; undefined when none or several are. */
  private memberByBaseName(archive: MemberArchive, baseName: string): string | undefined {
    let byBaseName = this.byBaseName.get(archive);
    if (!byBaseName) {
      byBaseName = new Map();
      for (const member of archive.members()) {
        const base = member.slice(member.lastIndexOf('/') + 1);
        byBaseName.set(base, byBaseName.has(base) ? null : member);
      }
      this.byBaseName.set(archive, byBaseName);
    }
    return byBaseName.get(baseName) ?? undefined;
  }
}

/** `a/b/images.zip` → `a/b/images`, `a/b`, `a`, ``. */
function prefixesOf(archiveKey: string): string[] {
  const prefixes = [archiveKey.replace(/\.(zip|tar)$/i, '')];
  for (let dir = archiveKey; dir.includes('/');) {
    dir = dir.slice(0, dir.lastIndexOf('/'));
    prefixes.push(dir);
  }
  return [...prefixes, ''];
}

/** One ArchiveFolder per source root and process, opened on first need (a worker reads many shards of one source). */
const folders = new LruCache<Promise<ArchiveFolder>>(8);

export function archiveFolderOf(store: ObjectStore): Promise<ArchiveFolder> {
  const opening = folders.get(store.root, () => ArchiveFolder.open(store));
  opening.catch(() => folders.deleteIf(store.root, opening));
  return opening;
}
