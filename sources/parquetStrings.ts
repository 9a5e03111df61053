/**
 * Reads chosen flat string columns of a Parquet file held in memory, and nothing else: the footer,
 * then only those columns' chunks, page by page, in one tight loop per page. Written for img2dataset's
 * side files (sources/img2datasetParquet.ts), which planning reads for every record of a dataset:
 * parquetjs-lite assembled a row object per record through its generic record shredder (9-14 µs a
 * row); this decodes a dictionary once per page and maps indices (well under 1 µs a row).
 *
 * Supported, as pyarrow and other writers produce them: data pages v1 and v2; PLAIN,
 * PLAIN_DICTIONARY and RLE_DICTIONARY BYTE_ARRAY values; RLE definition levels of optional columns;
 * UNCOMPRESSED, SNAPPY, GZIP and BROTLI pages. Anything else is a ParquetStringsError naming it.
 * Format: github.com/apache/parquet-format (parquet.thrift, Encodings.md), Thrift compact protocol.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import snappy from 'snappyjs';

export class ParquetStringsError extends Error {
  override name = 'ParquetStringsError';
}

export interface ParquetFooter {
  rowCount: number;
  /** Top-level columns by name: whether values may be null (an OPTIONAL column) and the physical type. */
  columns: Map<string, { repetition: number; physicalType: number }>;
  rowGroups: Array<{ rowCount: number; chunks: Map<string, ColumnChunk> }>;
}

interface ColumnChunk {
  codec: number;
  valueCount: number;
  /** Byte range of the chunk's pages (dictionary page first when there is one). */
  start: number;
  end: number;
}

const BYTE_ARRAY = 6;
const OPTIONAL = 1;
const REPEATED = 2;
const MAGIC = 'PAR1';

/** The footer of a whole Parquet file. */
export function readFooter(bytes: Buffer): ParquetFooter {
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== MAGIC || bytes.toString('latin1', bytes.length - 4) !== MAGIC) {
    throw new ParquetStringsError('no Parquet magic bytes (PAR1) at both ends');
  }
  const length = bytes.readUInt32LE(bytes.length - 8);
  const start = bytes.length - 8 - length;
  if (start < 4) throw new ParquetStringsError(`footer length ${length} exceeds the file (${bytes.length} bytes)`);
  const meta = new CompactReader(bytes, start, bytes.length - 8).struct(FOOTER_FIELDS);

  const columns = new Map<string, { repetition: number; physicalType: number }>();
  const schema = list(meta[2]);
  // schema[0] is the root; a top-level field with children is a group (nested column): not ours.
  for (let i = 1, childrenLeft = Number(field(schema[0], 5) ?? 0); i < schema.length && childrenLeft > 0; childrenLeft--) {
    const element = schema[i]!;
    const name = text(field(element, 4));
    const children = Number(field(element, 5) ?? 0);
    if (children === 0) columns.set(name, { repetition: Number(field(element, 3) ?? 0), physicalType: Number(field(element, 1)) });
    i += 1 + subtreeSize(schema, i, children);
  }
  const rowGroups = list(meta[4]).map((group) => {
    const chunks = new Map<string, ColumnChunk>();
    for (const chunk of list(field(group, 1))) {
      const m = field(chunk, 3) as Struct | undefined;
      if (!m) throw new ParquetStringsError('a column chunk without metadata (external column files are not supported)');
      const path = list(m[3]).map(text);
      if (path.length !== 1) continue;
      const dataOffset = Number(m[9]);
      const dictionaryOffset = m[11] === undefined ? undefined : Number(m[11]);
      const begin = dictionaryOffset !== undefined && dictionaryOffset > 0 && dictionaryOffset < dataOffset ? dictionaryOffset : dataOffset;
      chunks.set(path[0]!, { codec: Number(m[4]), valueCount: Number(m[5]), start: begin, end: begin + Number(m[7]) });
    }
    return { rowCount: Number(field(group, 3)), chunks };
  });
  return { rowCount: Number(meta[3]), columns, rowGroups };
}

/** Schema elements below element `at` with `children` direct children (depth-first, flattened). */
function subtreeSize(schema: unknown[], at: number, children: number): number {
  let size = 0;
  for (let c = 0; c < children; c++) {
    const child = schema[at + 1 + size] as Struct | undefined;
    if (!child) throw new ParquetStringsError('the schema in the footer lists more children than elements');
    size += 1 + subtreeSize(schema, at + 1 + size, Number(child[5] ?? 0));
  }
  return size;
}

/**
 * The values of one string column in one row group, null where the row has none. The column must
 * be a top-level BYTE_ARRAY column named in the footer.
 */
export function readStrings(bytes: Buffer, footer: ParquetFooter, rowGroup: number, column: string): Array<string | null> {
  const info = footer.columns.get(column);
  const chunk = footer.rowGroups[rowGroup]?.chunks.get(column);
  if (!info || !chunk) throw new ParquetStringsError(`no column '${column}' in row group ${rowGroup}`);
  if (info.physicalType !== BYTE_ARRAY) throw new ParquetStringsError(`column '${column}' is not BYTE_ARRAY (physical type ${info.physicalType})`);
  if (info.repetition === REPEATED) throw new ParquetStringsError(`column '${column}' is repeated, not a flat column`);
  const optional = info.repetition === OPTIONAL;
  if (!(chunk.start >= 0 && chunk.start < chunk.end && chunk.end <= bytes.length)) {
    throw new ParquetStringsError(`column '${column}' of row group ${rowGroup} lies outside the file (bytes ${chunk.start}-${chunk.end} of ${bytes.length})`);
  }
  const values: Array<string | null> = [];
  let dictionary: string[] | undefined;
  let pos = chunk.start;
  while (values.length < chunk.valueCount) {
    if (pos >= chunk.end) throw new ParquetStringsError(`column '${column}' of row group ${rowGroup} ends after ${values.length} of ${chunk.valueCount} values`);
    const reader = new CompactReader(bytes, pos, chunk.end);
    const header = reader.struct(PAGE_HEADER_FIELDS);
    const bodyStart = reader.pos;
    const compressedSize = Number(header[3]);
    const uncompressedSize = Number(header[2]);
    if (!Number.isInteger(compressedSize) || compressedSize < 0 || !Number.isInteger(uncompressedSize) || uncompressedSize < 0) {
      throw new ParquetStringsError(`a page header of column '${column}' in row group ${rowGroup} has no valid sizes`);
    }
    pos = bodyStart + compressedSize;
    if (pos > chunk.end) throw new ParquetStringsError(`a page of column '${column}' runs past its chunk`);
    const body = bytes.subarray(bodyStart, pos);
    const where = `column '${column}' of row group ${rowGroup}`;
    switch (header[1]) {
      case 2: {
        // Dictionary page: PLAIN values, whatever its encoding field says (PLAIN or PLAIN_DICTIONARY).
        const data = decompress(body, chunk.codec, uncompressedSize, where);
        // Each PLAIN value takes at least its 4-byte length.
        const count = checkedCount(field(header[7], 1), data.length / 4, where);
        dictionary = plainStrings(data, 0, count, where);
        break;
      }
      case 0: {
        const page = header[5] as Struct;
        const count = checkedCount(page?.[1], chunk.valueCount - values.length, where);
        const data = decompress(body, chunk.codec, uncompressedSize, where);
        let at = 0;
        let defined: Uint32Array | undefined;
        if (optional) {
          if (page[3] !== 3) throw new ParquetStringsError(`${where}: definition levels encoded as ${page[3]}, only RLE (3) is supported`);
          if (data.length < 4) throw new ParquetStringsError(`${where}: a data page ends before its definition levels`);
          const length = data.readUInt32LE(0);
          defined = hybrid(data, 4, 4 + length, 1, count, where);
          at = 4 + length;
        }
        pushValues(values, data, at, data.length, Number(page[2]), count, defined, dictionary, where);
        break;
      }
      case 3: {
        const page = header[8] as Struct;
        const count = checkedCount(page?.[1], chunk.valueCount - values.length, where);
        const defLength = Number(page[5] ?? 0);
        const repLength = Number(page[6] ?? 0);
        const defined = optional ? hybrid(body, repLength, repLength + defLength, 1, count, where) : undefined;
        const rest = body.subarray(repLength + defLength);
        const compressed = page[7] !== false;
        const data = compressed ? decompress(rest, chunk.codec, uncompressedSize - repLength - defLength, where) : rest;
        pushValues(values, data, 0, data.length, Number(page[4]), count, defined, dictionary, where);
        break;
      }
      default:
        break; // index pages and the like carry no values
    }
  }
  return values;
}

/** A page's value count, which must be a whole number no larger than what is left to read. */
function checkedCount(value: unknown, max: number, where: string): number {
  const count = Number(value);
  if (!Number.isInteger(count) || count < 0 || count > max) throw new ParquetStringsError(`${where}: a page claims ${String(value)} values, more than the chunk holds`);
  return count;
}

function pushValues(
  out: Array<string | null>,
  data: Buffer,
  from: number,
  to: number,
  encoding: number,
  count: number,
  defined: Uint32Array | undefined,
  dictionary: string[] | undefined,
  where: string,
): void {
  let present = count;
  if (defined) {
    present = 0;
    for (let i = 0; i < count; i++) present += defined[i]!;
  }
  let decoded: ArrayLike<string>;
  if (encoding === 0) decoded = plainStrings(data, from, present, where);
  else if (encoding === 2 || encoding === 8) {
    if (!dictionary) throw new ParquetStringsError(`${where}: a dictionary-encoded page without a dictionary page`);
    const width = data[from]!;
    const indices = hybrid(data, from + 1, to, width, present, where);
    const strings = new Array<string>(present);
    for (let i = 0; i < present; i++) {
      const value = dictionary[indices[i]!];
      if (value === undefined) throw new ParquetStringsError(`${where}: dictionary index ${indices[i]} beyond its ${dictionary.length} entries`);
      strings[i] = value;
    }
    decoded = strings;
  } else throw new ParquetStringsError(`${where}: value encoding ${encoding} is not supported (PLAIN, PLAIN_DICTIONARY, RLE_DICTIONARY are)`);
  let next = 0;
  for (let i = 0; i < count; i++) out.push(!defined || defined[i] ? decoded[next++]! : null);
}

/** `count` PLAIN BYTE_ARRAY values (4-byte little-endian length, then the bytes) from `from`. */
function plainStrings(data: Buffer, from: number, count: number, where: string): string[] {
  const strings = new Array<string>(count);
  let pos = from;
  for (let i = 0; i < count; i++) {
    if (pos + 4 > data.length) throw new ParquetStringsError(`${where}: page ends inside value ${i} of ${count}`);
    const length = data.readUInt32LE(pos);
    pos += 4;
    if (pos + length > data.length) throw new ParquetStringsError(`${where}: page ends inside value ${i} of ${count}`);
    strings[i] = data.toString('utf8', pos, pos + length);
    pos += length;
  }
  return strings;
}

/** `count` values of the RLE / bit-packing hybrid encoding of `width`-bit integers in data[from, to). */
function hybrid(data: Buffer, from: number, to: number, width: number, count: number, where: string): Uint32Array {
  const out = new Uint32Array(count);
  if (width > 32) throw new ParquetStringsError(`${where}: bit width ${width} over 32`);
  const byteWidth = (width + 7) >> 3;
  const mask = (1 << width) - 1; // used for widths up to 24 only
  let pos = from;
  let n = 0;
  while (n < count) {
    if (pos >= to) throw new ParquetStringsError(`${where}: levels or indices end after ${n} of ${count}`);
    let header = 0;
    for (let shift = 0; ; shift += 7) {
      if (pos >= to || shift > 35) throw new ParquetStringsError(`${where}: a run header is cut off or too long`);
      const byte = data[pos++]!;
      header += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) break;
    }
    if (header % 2 === 1) {
      // Bit-packed: (header >> 1) groups of 8 values, least significant bit first.
      const values = Math.floor(header / 2) * 8;
      let bits = 0;
      let buffered = 0;
      if (width <= 24) {
        // Integer ops: at most 23 bits are held before a byte is added, so nothing passes 31 bits.
        for (let i = 0; i < values && n < count; i++) {
          while (bits < width) {
            buffered |= (data[pos++] ?? 0) << bits;
            bits += 8;
          }
          out[n++] = buffered & mask;
          buffered >>>= width;
          bits -= width;
        }
      } else {
        for (let i = 0; i < values && n < count; i++) {
          while (bits < width) {
            buffered += (data[pos++] ?? 0) * 2 ** bits;
            bits += 8;
          }
          out[n++] = buffered % 2 ** width;
          buffered = Math.floor(buffered / 2 ** width);
          bits -= width;
        }
      }
    } else {
      const run = header / 2;
      let value = 0;
      for (let b = 0; b < byteWidth; b++) value += data[pos++]! * 2 ** (8 * b);
      for (let i = 0; i < run && n < count; i++) out[n++] = value;
    }
  }
  return out;
}

function decompress(body: Buffer, codec: number, size: number, where: string): Buffer {
  let out: Buffer;
  try {
    switch (codec) {
      case 0:
        return body;
      case 1:
        out = snappy.uncompress(body);
        break;
      case 2:
        out = gunzipSync(body);
        break;
      case 4:
        out = brotliDecompressSync(body);
        break;
      default:
        throw new ParquetStringsError(`${where}: compression codec ${codec} is not supported (UNCOMPRESSED, SNAPPY, GZIP, BROTLI are)`);
    }
  } catch (err) {
    if (err instanceof ParquetStringsError) throw err;
    throw new ParquetStringsError(`${where}: a page does not decompress (${(err as Error).message})`);
  }
  if (out.length !== size) throw new ParquetStringsError(`${where}: a page decompresses to ${out.length} bytes, its header says ${size}`);
  return out;
}

/** A Thrift struct as field id -> value (lists as arrays, binaries as Buffers, i64 as numbers). */
type Struct = Record<number, unknown>;

/**
 * The fields read, by id, of a struct (a nested shape for a struct field or a list of structs; 1 for
 * any other field): the rest are skipped without allocating anything. The footer's column
 * statistics and pandas metadata, and the pages' statistics, are most of their bytes.
 */
interface Shape {
  [id: number]: Shape | 1;
}

/** FileMetaData: schema (type, repetition, name, children), rows, row groups (chunks' metadata, rows). */
const FOOTER_FIELDS: Shape = {
  2: { 1: 1, 3: 1, 4: 1, 5: 1 },
  3: 1,
  4: { 1: { 3: { 3: 1, 4: 1, 5: 1, 7: 1, 9: 1, 11: 1 } }, 3: 1 },
};

/** PageHeader: type, sizes, and the value counts and encodings of data (v1, v2) and dictionary pages. */
const PAGE_HEADER_FIELDS: Shape = { 1: 1, 2: 1, 3: 1, 5: { 1: 1, 2: 1, 3: 1 }, 7: { 1: 1 }, 8: { 1: 1, 4: 1, 5: 1, 6: 1, 7: 1 } };

function field(struct: unknown, id: number): unknown {
  return (struct as Struct | undefined)?.[id];
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function text(value: unknown): string {
  if (!Buffer.isBuffer(value)) throw new ParquetStringsError('a name in the footer is not a string');
  return value.toString('utf8');
}

/** The Thrift compact protocol, generically: enough for Parquet's footer and page headers. */
class CompactReader {
  constructor(
    private readonly bytes: Buffer,
    public pos: number,
    private readonly end: number,
  ) {}

  /** The fields of the struct named in `shape` (and its bools); the rest are read past. */
  struct(shape?: Shape): Struct {
    const out: Struct = {};
    let id = 0;
    for (;;) {
      const byte = this.byte();
      const type = byte & 0x0f;
      if (type === 0) return out;
      const delta = byte >> 4;
      id = delta === 0 ? this.zigzag() : id + delta;
      const wanted = shape?.[id];
      if (type === 1 || type === 2) out[id] = type === 1;
      else if (wanted === undefined) this.value(type, undefined);
      else out[id] = this.value(type, wanted === 1 ? undefined : wanted, true);
    }
  }

  /** A value of `type`; a skipped one (keep false) is only read past. */
  private value(type: number, shape: Shape | undefined, keep = false): unknown {
    switch (type) {
      case 1:
      case 2:
        return this.byte() === 1; // a bool inside a list or map: one byte each
      case 3:
        return (this.byte() << 24) >> 24;
      case 4:
      case 5:
      case 6:
        return this.zigzag();
      case 7:
        this.need(8);
        this.pos += 8;
        return keep ? this.bytes.readDoubleLE(this.pos - 8) : undefined;
      case 8: {
        const length = this.varint();
        this.need(length);
        this.pos += length;
        return keep ? this.bytes.subarray(this.pos - length, this.pos) : undefined;
      }
      case 9:
      case 10: {
        const header = this.byte();
        const size = header >> 4 === 15 ? this.varint() : header >> 4;
        const items: unknown[] = [];
        for (let i = 0; i < size; i++) {
          const item = this.value(header & 0x0f, shape, keep);
          if (keep) items.push(item);
        }
        return items;
      }
      case 11: {
        const size = this.varint();
        const types = size === 0 ? 0 : this.byte();
        for (let i = 0; i < size; i++) {
          this.value(types >> 4, undefined);
          this.value(types & 0x0f, undefined);
        }
        return undefined; // no map is read (key-value metadata only)
      }
      case 12:
        return keep ? this.struct(shape) : this.skipStruct();
      default:
        throw new ParquetStringsError(`Thrift type ${type} at byte ${this.pos}: the footer or a page header is damaged`);
    }
  }

  private skipStruct(): undefined {
    for (;;) {
      const byte = this.byte();
      const type = byte & 0x0f;
      if (type === 0) return undefined;
      if (byte >> 4 === 0) this.zigzag();
      if (type !== 1 && type !== 2) this.value(type, undefined);
    }
  }

  private byte(): number {
    this.need(1);
    return this.bytes[this.pos++]!;
  }

  private varint(): number {
    let value = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      const byte = this.byte();
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw new ParquetStringsError(`a varint longer than 10 bytes at byte ${this.pos}`);
  }

  private zigzag(): number {
    const n = this.varint();
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }

  private need(count: number): void {
    if (this.pos + count > this.end) throw new ParquetStringsError(`the footer or a page header ends early (byte ${this.pos})`);
  }
}
