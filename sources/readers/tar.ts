/**
 * Reader of uncompressed tar files (ustar, GNU long names, pax path/size records), from a stream or
 * by byte ranges. It parses only headers and skips member data, so a multi-GB webdataset shard costs
 * a few KB of memory; callers later read a member with ObjectStore.getRange(offset, offset + size).
 * Read by ranges, a member's data is never fetched unless it shares a read window with a header.
 */
import { RecordError } from '../../domain/errors.js';

export interface TarEntry {
  path: string;
  /** Byte offset of the member's data inside the tar. */
  offset: number;
  size: number;
  /** The member's bytes, when the caller's `capture` asked for them (small sidecars). */
  data?: Buffer;
}

export interface TarOptions {
  /** Members to hand back with their bytes, saving a ranged read each; keep it to small members. */
  capture?: (entry: { path: string; size: number }) => boolean;
  /**
   * Told of each member that is neither a regular file, a folder nor metadata (a symbolic or hard
   * link, a device, a FIFO), with what it is; such members are never yielded.
   */
  refused?: (path: string, kind: string) => void;
}

/** Member types that are not files: what a caller unpacking the tar refuses to create. */
const LINKS_AND_DEVICES: Readonly<Record<string, string>> = { '1': 'a hard link', '2': 'a symbolic link', '3': 'a character device', '4': 'a block device', '6': 'a FIFO' };

export class TarError extends RecordError {
  override name = 'TarError';

  constructor(
    message: string,
    /** Path of the member whose data was cut off; undefined when the damage is in a header. */
    readonly member?: string,
  ) {
    super(message);
  }
}

const BLOCK = 512;

/**
 * Yields every regular file of a tar in archive order. Each entry is yielded only once its data has
 * fully arrived, so when the stream ends early (or a header is damaged) the complete entries before the
 * damage have been yielded and then a TarError naming the tar is thrown.
 */
export function tarEntries(stream: NodeJS.ReadableStream, name: string, options: TarOptions = {}): AsyncGenerator<TarEntry> {
  return walkTar(new BlockReader(stream), name, options);
}

/**
 * The same entries, read by byte ranges of a tar of `size` bytes: windows of `windowBytes` from each
 * header on, jumping over member data that extends past the window. Damage is reported as by
 * tarEntries (the size tells where the file ends).
 */
export function tarEntriesByRange(
  readRange: (start: number, end: number) => Promise<Buffer>,
  size: number,
  name: string,
  options: TarOptions & { windowBytes?: number } = {},
): AsyncGenerator<TarEntry> {
  return walkTar(new RangeReader(readRange, size, options.windowBytes ?? 256 * 1024), name, options);
}

interface ByteReader {
  readonly position: number;
  read(n: number): Promise<Buffer>;
  skip(n: number): Promise<number>;
  close(): Promise<void>;
}

async function* walkTar(reader: ByteReader, name: string, options: TarOptions): AsyncGenerator<TarEntry> {
  /** Overrides for the next header, from a GNU 'L' member or a pax 'x' member. */
  let pending: { path?: string; size?: number } = {};
  try {
    for (;;) {
      const headerOffset = reader.position;
      const header = await reader.read(BLOCK);
      // A tar always ends with zero blocks (tar and Python's tarfile write them), so an end of stream
      // before them is damage even on a block boundary, where interrupted copies often stop.
      if (header.length === 0) throw truncated(name, `at offset ${headerOffset} without the end-of-archive marker`);
      if (header.length < BLOCK) throw truncated(name, `inside the header at offset ${headerOffset}`);
      if (header.every((b) => b === 0)) return; // end-of-archive marker
      const h = parseHeader(header, name, headerOffset);

      if (h.type === 'L' || h.type === 'x') {
        const padded = roundUp(h.size);
        const body = await reader.read(padded);
        const what = h.type === 'L' ? 'GNU long name' : 'pax header';
        if (body.length < padded) throw truncated(name, `inside the ${what} at offset ${headerOffset}`);
        const text = body.subarray(0, h.size);
        pending = h.type === 'L' ? { ...pending, path: cString(text) } : { ...pending, ...parsePax(text, name, headerOffset) };
        continue;
      }

      const path = pending.path ?? h.path;
      const size = pending.size ?? h.size;
      pending = {};
      const padded = roundUp(size);
      const offset = reader.position;
      const regular = h.type === '0' || h.type === '\0' || h.type === '7';
      let data: Buffer | undefined;
      if (regular && options.capture?.({ path, size })) {
        const body = await reader.read(padded);
        if (body.length < padded) throw truncated(name, `inside the data of '${path}' at offset ${offset}`, path);
        data = Buffer.from(body.subarray(0, size)); // a copy, so the stream's chunk is not retained
      } else if ((await reader.skip(padded)) < padded) {
        throw truncated(name, `inside the data of '${path}' at offset ${offset}`, path);
      }
      if (regular) yield data ? { path, offset, size, data } : { path, offset, size };
      else if (LINKS_AND_DEVICES[h.type]) options.refused?.(path, LINKS_AND_DEVICES[h.type]!);
    }
  } finally {
    await reader.close();
  }
}

interface Header {
  path: string;
  size: number;
  type: string;
}

/**
 * The header in a 512-byte block found anywhere in a tar (seeking by range rather than walking from
 * the start), or undefined unless it has the ustar magic and a matching checksum.
 */
export function ustarHeaderAt(block: Buffer): Header | undefined {
  if (block.length < BLOCK || block.toString('latin1', 257, 262) !== 'ustar') return undefined;
  try {
    return parseHeader(block, '', 0);
  } catch {
    return undefined;
  }
}

function parseHeader(block: Buffer, name: string, at: number): Header {
  // The checksum sums the header with its own field read as spaces; it tells a damaged or non-tar file.
  const stored = parseOctal(block.subarray(148, 156));
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  if (stored !== sum) throw new TarError(`tar ${name} is damaged: bad header checksum at offset ${at}`);

  const base = cString(block.subarray(0, 100));
  // Only POSIX ustar has a name prefix; old GNU headers (magic 'ustar  ') keep times there.
  const ustar = block.subarray(257, 263).toString('latin1') === 'ustar\0';
  const prefix = ustar ? cString(block.subarray(345, 500)) : '';
  return {
    path: prefix ? `${prefix}/${base}` : base,
    size: parseNumber(block.subarray(124, 136)),
    type: String.fromCharCode(block[156]!),
  };
}

/** Numeric fields are octal text, or GNU base-256 (high bit set) for sizes of 8 GiB and more. */
function parseNumber(field: Buffer): number {
  if ((field[0]! & 0x80) === 0) return parseOctal(field);
  let value = field[0]! & 0x7f;
  for (let i = 1; i < field.length; i++) value = value * 256 + field[i]!;
  return value;
}

function parseOctal(field: Buffer): number {
  const text = field.toString('latin1').replace(/\0.*$/s, '').trim();
  return text ? parseInt(text, 8) : 0;
}

function cString(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? bytes.length : end).toString('utf8');
}

/** Pax records are `<length> <key>=<value>\n`; only path and size change how we read the next member. */
function parsePax(body: Buffer, name: string, at: number): { path?: string; size?: number } {
  const out: { path?: string; size?: number } = {};
  let pos = 0;
  while (pos < body.length) {
    const space = body.indexOf(0x20, pos);
    const length = space === -1 ? NaN : parseInt(body.subarray(pos, space).toString('latin1'), 10);
    if (!(length > 0) || pos + length > body.length) throw new TarError(`tar ${name} is damaged: bad pax header at offset ${at}`);
    const record = body.subarray(space + 1, pos + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    const key = record.slice(0, eq);
    const value = record.slice(eq + 1);
    if (key === 'path') out.path = value;
    if (key === 'size') out.size = Number(value);
    pos += length;
  }
  return out;
}

function roundUp(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK;
}

function truncated(name: string, where: string, member?: string): TarError {
  return new TarError(`tar ${name} is truncated: the file ends ${where}`, member);
}

/** Reads by ranges, a window at a time; skips cost nothing. */
class RangeReader implements ByteReader {
  position = 0;
  private window: Buffer = Buffer.alloc(0);
  private windowStart = 0;

  constructor(
    private readonly readRange: (start: number, end: number) => Promise<Buffer>,
    private readonly size: number,
    private readonly windowBytes: number,
  ) {}

  async read(n: number): Promise<Buffer> {
    const end = Math.min(this.position + n, this.size);
    if (this.position < this.windowStart || end > this.windowStart + this.window.length) {
      this.windowStart = this.position;
      this.window = end > this.position ? await this.readRange(this.position, Math.min(this.size, this.position + Math.max(n, this.windowBytes))) : Buffer.alloc(0);
    }
    const out = this.window.subarray(this.position - this.windowStart, end - this.windowStart);
    this.position += out.length;
    return out;
  }

  async skip(n: number): Promise<number> {
    const skipped = Math.max(0, Math.min(n, this.size - this.position));
    this.position += skipped;
    return skipped;
  }

  async close(): Promise<void> {}
}

/** Exact-length reads and skips over a chunked stream, tracking the absolute byte position. */
class BlockReader implements ByteReader {
  position = 0;
  private readonly chunks: AsyncIterator<string | Buffer>;
  private buffered: Buffer = Buffer.alloc(0);
  private ended = false;

  constructor(stream: NodeJS.ReadableStream) {
    this.chunks = stream[Symbol.asyncIterator]();
  }

  /** Up to n bytes; fewer only at the end of the stream. */
  async read(n: number): Promise<Buffer> {
    while (this.buffered.length < n && (await this.fill())) {}
    const out = this.buffered.subarray(0, n);
    this.buffered = this.buffered.subarray(out.length);
    this.position += out.length;
    return out;
  }

  /** Discards up to n bytes without keeping them; returns how many were skipped. */
  async skip(n: number): Promise<number> {
    let skipped = 0;
    for (;;) {
      const take = Math.min(n - skipped, this.buffered.length);
      this.buffered = this.buffered.subarray(take);
      skipped += take;
      if (skipped === n || !(await this.fill())) break;
    }
    this.position += skipped;
    return skipped;
  }

  private async fill(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.chunks.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    return true;
  }

  /** Stops the underlying stream (releasing an S3 connection) when the caller leaves early. */
  async close(): Promise<void> {
    if (!this.ended) await this.chunks.return?.();
  }
}
