// Minimal typings for the parts of parquetjs-lite this project uses (the package ships none).
declare module 'parquetjs-lite' {
  export interface FieldDefinition {
    type?: string;
    optional?: boolean;
    repeated?: boolean;
    compression?: 'UNCOMPRESSED' | 'GZIP' | 'SNAPPY' | 'LZO' | 'BROTLI';
    fields?: Record<string, FieldDefinition>;
  }
  export class ParquetSchema {
    constructor(fields: Record<string, FieldDefinition>);
  }
  export class ParquetWriter {
    static openStream(schema: ParquetSchema, stream: NodeJS.WritableStream, opts?: { rowGroupSize?: number }): Promise<ParquetWriter>;
    appendRow(row: Record<string, unknown>): Promise<void>;
    setMetadata(key: string, value: string): void;
    close(): Promise<void>;
  }
  export class ParquetReader {
    static openFile(path: string): Promise<ParquetReader>;
    constructor(metadata: unknown, envelopeReader: unknown, opts?: object);
    /** Only the named columns (each a path: ['key']) when given. */
    getCursor(columns?: string[][]): { next(): Promise<Record<string, unknown> | null> };
    getRowCount(): number;
    close(): Promise<void>;
  }
  const parquet: { ParquetSchema: typeof ParquetSchema; ParquetWriter: typeof ParquetWriter; ParquetReader: typeof ParquetReader };
  export default parquet;
}

// Internals used to read Parquet files written by pyarrow (format version 2, RLE_DICTIONARY pages):
// sources/img2datasetParquet.ts.
declare module 'parquetjs-lite/lib/reader.js' {
  import type { ParquetReader } from 'parquetjs-lite';
  export interface FileMetaData {
    version: number;
    num_rows: number | bigint;
    schema: Array<{ name: string }>;
  }
  export class ParquetEnvelopeReader {
    static openBuffer(buffer: Buffer): Promise<ParquetEnvelopeReader>;
    readHeader(): Promise<void>;
    readFooter(): Promise<FileMetaData>;
    close(): Promise<void>;
  }
  export { ParquetReader };
}
declare module 'parquetjs-lite/lib/codec/index.js' {
  const codecs: Record<string, unknown>;
  export = codecs;
}
