/**
 * Images that a dataset's records name by path but ships inside `.zip` (or uncompressed `.tar`)
 * archives under its root:
 * Geo170K's `images.zip` beside `qa_tuning.json` (records name `images/geoqa_plus/1.png`), ALLaVA's
 * `allava_laion/image_chunks/images_<n>.zip` (records name `allava_laion/images/<id>.jpeg`; the
 * release's own download script unpacks them with `unzip -j`, dropping the members' folders). A path
 * that is not a file is looked up here: the root is listed once, and an archive is opened (a zip's
 * central directory, zipArchive.ts; a tar's headers, tarArchive.ts) only when a path it can hold is
 * looked up and the archives before it in key order did not hold it; by the rules of `find`.
 */
import { LruCache } from '../../domain/lruCache.js';
import type { ObjectInfo, ObjectStore } from '../../storage/objectStore.js';
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
  /** Per archive key, the archive once opened, or why it could not be (a message naming it). */
  private readonly opened = new Map<string, Promise<MemberArchive | string>>();
  /** Per archive, each base name's one member, or null when several share it (built on first need). */
  private readonly byBaseName = new Map<MemberArchive, Map<string, string | null>>();

  private constructor(
    private readonly store: ObjectStore,
    /** The `.zip` and `.tar` files under the root, in key order, as listed (none opened yet). */
    private readonly listed: readonly ObjectInfo[],
  ) {}

  /** Lists the `.zip` and `.tar` files under the store's root; each is opened on first need. */
  static async open(store: ObjectStore): Promise<ArchiveFolder> {
    const listed: ObjectInfo[] = [];
    for await (const object of store.list('')) {
      const name = object.key.toLowerCase();
      if (name.endsWith('.zip') || name.endsWith('.tar')) listed.push(object);
    }
    return new ArchiveFolder(store, listed);
  }

  get size(): number {
    return this.listed.length;
  }

  /**
   * The member standing for `path` (a key under the root), first archive in key order winning, among
   * the archives that can hold it: those at the root, and those under the path's top folder (an
   * archive under another top folder never stands for it):
   *  1. `path` is `<prefix>/<member>` where prefix is the archive's own name without `.zip` or `.tar`
   *     (`images.zip` holding `geoqa_plus/1.png` for `images/geoqa_plus/1.png`), its folder, or any
   *     folder above it up to the root (`images.zip` holding `images/geoqa_plus/1.png`);
   *  2. else the one member with the path's file name, in an archive under the path's top folder
   *     (ALLaVA: `allava_laion/images/1.jpeg` in `allava_laion/image_chunks/images_0.zip`).
   * Archives are opened in that order as the lookup reaches them, so one holding the path leaves
   * those after it unopened.
   */
  async find(path: string): Promise<ArchiveMemberRef | undefined> {
    const top = topFolder(path);
    const candidates = this.candidates(path);
    for (const listed of candidates) {
      const archive = await this.archive(listed);
      if (typeof archive === 'string') continue;
      for (const prefix of prefixesOf(archive.key)) {
        const member = prefix === '' ? path : path.startsWith(`${prefix}/`) ? path.slice(prefix.length + 1) : undefined;
        if (member !== undefined && archive.has(member)) return { archive, member };
      }
    }
    const baseName = path.slice(path.lastIndexOf('/') + 1);
    for (const listed of candidates) {
      if (!listed.key.startsWith(top)) continue;
      const archive = await this.archive(listed);
      if (typeof archive === 'string') continue;
      const member = this.memberByBaseName(archive, baseName);
      if (member !== undefined) return { archive, member };
    }
    return undefined;
  }

  /** Why the archives that could hold `path` but cannot be read were not searched (after `find`). */
  async unreadable(path: string): Promise<string[]> {
    const why = await Promise.all(this.candidates(path).map((listed) => this.opened.get(listed.key)));
    return why.filter((archive): archive is string => typeof archive === 'string');
  }

  private candidates(path: string): ObjectInfo[] {
    const top = topFolder(path);
    return this.listed.filter(({ key }) => !key.includes('/') || key.startsWith(top));
  }

  /** The archive opened (once per archive), or why it cannot be read: a damaged one is set aside, named where a path is not found. */
  private archive({ key, size }: ObjectInfo): Promise<MemberArchive | string> {
    let opening = this.opened.get(key);
    if (!opening) {
      opening = (key.toLowerCase().endsWith('.zip') ? ZipArchive : TarArchive).open(this.store, key, size).catch((err: unknown) => {
        if (!(err instanceof ZipArchiveError) && !(err instanceof TarError)) throw err;
        return err.message;
      });
      this.opened.set(key, opening);
      // Another failure (the store's) is not the archive's: tried again on the next lookup.
      opening.catch(() => this.opened.delete(key));
    }
    return opening;
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

/** `a/b/c.png` → `a/`; `c.png` → `` (the root: every archive is under it). */
function topFolder(path: string): string {
  const slash = path.indexOf('/');
  return slash === -1 ? '' : path.slice(0, slash + 1);
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
