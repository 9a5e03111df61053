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
  const parquet: { ParquetSchema: typeof ParquetSchema; ParquetWriter: typeof ParquetWriter };
  export default parquet;
}
