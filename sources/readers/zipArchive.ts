/**
 * Members of a `.zip` read in place through the ObjectStore's ranged reads, local or S3: ALLaVA's
 * images come as `image_chunks/images_<n>.zip` of ~9 GB each, Geo170K's as `images.zip`, and
 * unpacking them first costs hundreds of GB. The central directory is read once per archive (a few
 * reads: the end record, the zip64 locator and record, the directory itself in 1 MiB blocks); each
 * member then costs one ranged read of its local header and data together (the local header's size
 * is taken from the central directory's, a second read covering the rest when the local extra field
 * is longer). yauzl parses the directory (zip64, name encodings, size checks) and inflates
 * (docs/adr/0001-zip-archives-read-in-place-with-yauzl.md has the measurements); the CRC-32 the
 * directory records is checked here, since yauzl does not.
 */
import { crc32 } from 'node:zlib';
import { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { RecordError } from '../../domain/errors.js';
import type { ObjectStore } from '../../storage/objectStore.js';

/** What is wrong with one member: the rest of the archive is still read. */
export class ZipMemberError extends RecordError {
  override name = 'ZipMemberError';
  constructor(
    readonly archive: string,
    readonly member: string,
    /** `encrypted`, `corrupt` (bad data, CRC or sizes) or `unsupported` (a compression method other than stored or deflated). */
    readonly code: 'encrypted' | 'corrupt' | 'unsupported',
    detail: string,
  ) {
    super(`${archive} member '${member}': ${detail}`);
  }
}

/** An archive that cannot be read at all (no end of central directory, a truncated directory...). */
export class ZipArchiveError extends RecordError {
  override name = 'ZipArchiveError';
}

/** Bytes read beyond the member's expected end, so a local extra field a little longer than the central one needs no second read. */
const LOCAL_HEADER_SLACK = 256;
/** The central directory is parsed in blocks of this size: a handful of reads instead of two per entry. */
const DIRECTORY_BLOCK = 1 << 20;
/** A local file header's fixed part (APPNOTE 4.3.7). */
const LOCAL_HEADER_SIZE = 30;

/**
 * yauzl's view of an object in the store. Reads are served from a window: the directory's many small
 * sequential reads from one block, a member's header and data from the span `expect` announced, which
 * is fetched in one getRange when yauzl asks for the header and served again when it asks for the data.
 */
class StoreRangeReader extends yauzl.RandomAccessReader {
  private block: { start: number; bytes: Buffer } | undefined;
  /** Spans announced for member reads, by their start (the local header's offset). */
  private readonly announced = new Map<number, number>();
  private readonly fetched = new Map<number, Buffer>();
  /** Ranged reads made, for the benchmark and tests. */
  reads = 0;

  constructor(
    private readonly store: ObjectStore,
    private readonly key: string,
    private readonly size: number,
  ) {
    super();
  }

  expect(start: number, length: number): void {
    this.announced.set(start, Math.min(length, this.size - start));
  }

  /** The directory is parsed: its block is let go (a member is read by its own span). */
  dropBlock(): void {
    this.block = undefined;
  }

  forget(start: number): void {
    this.announced.delete(start);
    this.fetched.delete(start);
  }

  /** Bytes [start, end) from the cached windows, or undefined when none holds them. */
  private cached(start: number, end: number): Buffer | undefined {
    for (const [at, bytes] of this.fetched) if (start >= at && end <= at + bytes.length) return bytes.subarray(start - at, end - at);
    const block = this.block;
    if (block && start >= block.start && end <= block.start + block.bytes.length) return block.bytes.subarray(start - block.start, end - block.start);
    return undefined;
  }

  private async fetch(start: number, end: number): Promise<Buffer> {
    this.reads++;
    const bytes = await this.store.getRange(this.key, start, end);
    if (bytes.length !== end - start) throw new ZipArchiveError(`${this.key} ends before byte ${end}: the archive is truncated or changed since it was listed`);
    return bytes;
  }

  private async window(start: number, end: number): Promise<Buffer> {
    const hit = this.cached(start, end);
    if (hit) return hit;
    const announced = this.announced.get(start);
    if (announced !== undefined) {
      const bytes = await this.fetch(start, start + Math.max(announced, end - start));
      this.fetched.set(start, bytes);
      return bytes.subarray(0, end - start);
    }
    const bytes = await this.fetch(start, Math.min(this.size, Math.max(end, start + DIRECTORY_BLOCK)));
    this.block = { start, bytes };
    return bytes.subarray(0, end - start);
  }

  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null) => void): void {
    this.window(position, position + length).then(
      (bytes) => {
        bytes.copy(buffer, offset);
        callback(null);
      },
      (err: Error) => callback(err),
    );
  }

  override _readStreamForRange(start: number, end: number): Readable {
    return Readable.from(
      (async function* (reader: StoreRangeReader) {
        yield await reader.window(start, end);
      })(this),
    );
  }
}

/**
 * The central directory as typed arrays by member index: ~100 bytes a member with its name, where
 * yauzl's Entry objects take ~1 KB (an ALLaVA chunk holds ~50k images, a worker may hold ten chunks).
 */
interface Directory {
  index: Map<string, number>;
  offset: Float64Array;
  compressedSize: Float64Array;
  uncompressedSize: Float64Array;
  crc32: Uint32Array;
  method: Uint16Array;
  flags: Uint16Array;
  /** The central record's name and extra field lengths: the local header usually has the same. */
  headerTail: Uint32Array;
}

export class ZipArchive {
  private constructor(
    /** The archive's key in its store. */
    readonly key: string,
    private readonly zipfile: yauzl.ZipFile,
    private readonly reader: StoreRangeReader,
    private readonly directory: Directory,
  ) {}

  /** Reads the central directory of the archive `key` (`size` bytes, as listed). */
  static async open(store: ObjectStore, key: string, size: number): Promise<ZipArchive> {
    const reader = new StoreRangeReader(store, key, size);
    const options = { lazyEntries: true, autoClose: false, decodeStrings: true, validateEntrySizes: true, strictFileNames: false };
    try {
      const zipfile = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.fromRandomAccessReader(reader, size, options, (err, zip) => (err ? reject(err) : resolve(zip))));
      const n = zipfile.entryCount;
      const d: Directory = {
        index: new Map(),
        offset: new Float64Array(n),
        compressedSize: new Float64Array(n),
        uncompressedSize: new Float64Array(n),
        crc32: new Uint32Array(n),
        method: new Uint16Array(n),
        flags: new Uint16Array(n),
        headerTail: new Uint32Array(n),
      };
      let i = 0;
      await new Promise<void>((resolve, reject) => {
        zipfile.on('entry', (entry: yauzl.Entry) => {
          if (!entry.fileName.endsWith('/')) {
            d.index.set(entry.fileName, i);
            d.offset[i] = entry.relativeOffsetOfLocalHeader;
            d.compressedSize[i] = entry.compressedSize;
            d.uncompressedSize[i] = entry.uncompressedSize;
            d.crc32[i] = entry.crc32;
            d.method[i] = entry.compressionMethod;
            d.flags[i] = entry.generalPurposeBitFlag;
            d.headerTail[i] = entry.fileNameLength + entry.extraFieldLength;
            i++;
          }
          zipfile.readEntry();
        });
        zipfile.on('end', () => resolve());
        zipfile.on('error', reject);
        zipfile.readEntry();
      });
      reader.dropBlock();
      return new ZipArchive(key, zipfile, reader, d);
    } catch (err) {
      if (err instanceof ZipArchiveError) throw err;
      throw new ZipArchiveError(`${key} is not a readable zip archive: ${(err as Error).message}`);
    }
  }

  /** The files in the archive (folders left out), in central directory order. */
  members(): IterableIterator<string> {
    return this.directory.index.keys();
  }

  has(member: string): boolean {
    return this.directory.index.has(member);
  }

  /** Ranged reads made so far: the directory's, then one per member read (two when its local extra field is long). */
  get reads(): number {
    return this.reader.reads;
  }

  /** The bytes of one member, decompressed and checked against the directory's CRC-32 and size. */
  async read(member: string): Promise<Buffer> {
    const d = this.directory;
    const i = d.index.get(member);
    if (i === undefined) throw new ZipMemberError(this.key, member, 'corrupt', 'not in the archive');
    // A yauzl Entry again, with what openReadStream reads of it.
    const entry = Object.assign(Object.create(yauzl.Entry.prototype) as yauzl.Entry, {
      relativeOffsetOfLocalHeader: d.offset[i]!,
      compressedSize: d.compressedSize[i]!,
      uncompressedSize: d.uncompressedSize[i]!,
      compressionMethod: d.method[i]!,
      generalPurposeBitFlag: d.flags[i]!,
    });
    if (entry.isEncrypted()) throw new ZipMemberError(this.key, member, 'encrypted', 'the member is encrypted: only plain members are read');
    if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
      throw new ZipMemberError(this.key, member, 'unsupported', `compression method ${entry.compressionMethod} (only stored and deflated are read)`);
    }
    const start = entry.relativeOffsetOfLocalHeader;
    this.reader.expect(start, LOCAL_HEADER_SIZE + d.headerTail[i]! + entry.compressedSize + LOCAL_HEADER_SLACK);
    try {
      const stream = await new Promise<Readable>((resolve, reject) => this.zipfile.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))));
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      const bytes = Buffer.concat(chunks);
      const crc = crc32(bytes) >>> 0;
      if (crc !== d.crc32[i]) throw new Error(`CRC-32 ${crc.toString(16)} where the directory records ${d.crc32[i]!.toString(16)}`);
      return bytes;
    } catch (err) {
      if (err instanceof ZipArchiveError) throw err;
      throw new ZipMemberError(this.key, member, 'corrupt', (err as Error).message);
    } finally {
      this.reader.forget(start);
    }
  }
}
