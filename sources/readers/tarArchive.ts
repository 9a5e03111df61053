/**
 * An uncompressed `.tar` under a source's root, read in place as a zip is (zipArchive.ts): its
 * headers are indexed once by byte ranges (tar.ts tarEntriesByRange: windows from each header on,
 * jumping over data that passes the window), then each member costs one ranged read of its data. A
 * plain tar has no directory at its end, so the index walks every header; a tar of large images
 * reads a window per member for it, one of small images nearly every byte, once per process.
 */
import type { ObjectStore } from '../../storage/objectStore.js';
import { TarError, tarEntriesByRange } from './tar.js';

export class TarArchive {
  private constructor(
    /** The archive's key in its store. */
    readonly key: string,
    private readonly store: ObjectStore,
    /** Member path -> [start, end) of its data. */
    private readonly spans: ReadonlyMap<string, readonly [number, number]>,
  ) {}

  /** Indexes the tar `key` (`size` bytes, as listed); a damaged one throws a TarError naming it. */
  static async open(store: ObjectStore, key: string, size: number): Promise<TarArchive> {
    const spans = new Map<string, readonly [number, number]>();
    for await (const entry of tarEntriesByRange((start, end) => store.getRange(key, start, end), size, key)) {
      spans.set(entry.path, [entry.offset, entry.offset + entry.size]);
    }
    return new TarArchive(key, store, spans);
  }

  members(): IterableIterator<string> {
    return this.spans.keys();
  }

  has(member: string): boolean {
    return this.spans.has(member);
  }

  /** The bytes of one member: one ranged read. */
  async read(member: string): Promise<Buffer> {
    const span = this.spans.get(member);
    if (!span) throw new TarError(`tar ${this.key}: member '${member}' is not in the archive`, member);
    const bytes = await this.store.getRange(this.key, span[0], span[1]);
    if (bytes.length !== span[1] - span[0]) throw new TarError(`tar ${this.key}: member '${member}' ends past the file's end: the file has changed since it was indexed`, member);
    return bytes;
  }
}
