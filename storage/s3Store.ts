/**
 * The ObjectStore on S3 or any S3-compatible server (versitygw, MinIO, R2), through
 * @aws-sdk/client-s3: the same contract as the local store, create-if-absent by a conditional
 * PUT (If-None-Match), large objects by multipart upload. The SDK is loaded on the store's first
 * request, not with this module: a command that opens no s3:// store never pays for it (ADR 0070).
 */
import type { ListObjectsV2CommandInput, ListObjectsV2CommandOutput, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { mapLimit } from '../domain/mapLimit.js';
import { EXTRACTION_CACHE, listingSkips, StoreError, type ObjectInfo, type ObjectStore } from './objectStore.js';
import { s3Answer } from './s3Answer.js';

type Sdk = typeof import('@aws-sdk/client-s3');

export interface S3Options {
  /** Custom endpoint for S3-compatible stores (MinIO, versitygw, R2...). Credentials come from the AWS env/chain. */
  endpoint?: string;
  region?: string;
  forcePathStyle?: boolean;
}

/** Objects above this size are sent as a multipart upload (lib-storage) rather than one PUT. */
const MULTIPART_THRESHOLD = 16 * 1024 * 1024;

export class S3Store implements ObjectStore {
  readonly root: string;
  /** The store's address, for messages: `s3.endpoint`, else AWS's regional endpoint. */
  readonly endpoint: string;
  private readonly region: string;
  private opened?: Promise<{ sdk: Sdk; client: S3Client }>;

  constructor(
    private readonly bucket: string,
    private readonly prefix: string,
    private readonly options: S3Options = {},
  ) {
    this.root = `s3://${bucket}/${prefix}`;
    this.region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
    this.endpoint = options.endpoint ?? `https://s3.${this.region}.amazonaws.com`;
  }

  /** The SDK and this store's client, loaded and made once, on the first request. */
  private open(): Promise<{ sdk: Sdk; client: S3Client }> {
    this.opened ??= import('@aws-sdk/client-s3').then((sdk) => ({
      sdk,
      client: new sdk.S3Client({
        endpoint: this.options.endpoint,
        region: this.region,
        forcePathStyle: this.options.forcePathStyle ?? Boolean(this.options.endpoint),
        maxAttempts: 5,
        // Each command class's middleware stack resolved once, not per request (docs/adr/0084-*.md).
        cacheMiddleware: true,
      }),
    }));
    return this.opened;
  }

  private key(key: string): string {
    if (key.split('/').includes('..')) throw new StoreError(`key '${key}' escapes the store root ${this.root}`, key, 'escapes-root');
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      const { sdk, client } = await this.open();
      const res = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      return Buffer.from(await res.Body!.transformToByteArray());
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async getRange(key: string, start: number, end: number): Promise<Buffer> {
    if (end <= start) return Buffer.alloc(0);
    try {
      const { sdk, client } = await this.open();
      const res = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: this.key(key), Range: `bytes=${start}-${end - 1}` }));
      return Buffer.from(await res.Body!.transformToByteArray());
    } catch (err) {
      if (isMissing(err)) throw new StoreError(`no object '${key}' in ${this.root}`, key, 'not-found');
      throw err;
    }
  }

  async openRead(key: string): Promise<NodeJS.ReadableStream> {
    try {
      const { sdk, client } = await this.open();
      const res = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      return res.Body as NodeJS.ReadableStream;
    } catch (err) {
      if (isMissing(err)) throw new StoreError(`no object '${key}' in ${this.root}`, key, 'not-found');
      throw err;
    }
  }

  async put(key: string, body: Buffer | string, contentType?: string): Promise<void> {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const { sdk, client } = await this.open();
    if (bytes.length > MULTIPART_THRESHOLD) {
      const { Upload } = await import('@aws-sdk/lib-storage');
      await new Upload({
        client,
        params: { Bucket: this.bucket, Key: this.key(key), Body: bytes, ContentType: contentType },
      }).done();
      return;
    }
    await client.send(new sdk.PutObjectCommand({ Bucket: this.bucket, Key: this.key(key), Body: bytes, ContentType: contentType }));
  }

  /** A PUT is atomic: no cheaper way, no torn object. */
  create(key: string, body: Buffer | string, contentType?: string): Promise<void> {
    return this.put(key, body, contentType);
  }

  async putIfAbsent(key: string, body: Buffer | string, contentType?: string): Promise<boolean> {
    const { sdk, client } = await this.open();
    try {
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: this.bucket,
          Key: this.key(key),
          Body: typeof body === 'string' ? Buffer.from(body) : body,
          ContentType: contentType,
          IfNoneMatch: '*', // S3 conditional write: the server refuses atomically if the key exists
        }),
      );
      return true;
    } catch (err) {
      const status = s3Answer(err)?.status;
      if (status === 412 || status === 409) return false;
      throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      const { sdk, client } = await this.open();
      await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  async appendLine(key: string, line: string): Promise<void> {
    // Time first, so a writer's lines list in the order written; the random part keeps writers apart.
    await this.put(`${key}/${Date.now().toString(36).padStart(9, '0')}-${randomBytes(6).toString('hex')}`, line);
  }

  async readLines(key: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const entry of this.list(`${key}/`)) keys.push(entry.key);
    // A line is an object: fetched several at a time (mapLimit keeps the listed order).
    const bodies = await mapLimit(keys, 16, (k) => this.get(k));
    return bodies.flatMap((body) => (body ? [body.toString('utf8')] : []));
  }

  /**
   * ListObjectsV2 pages (keys in UTF-8 binary order). The extraction cache (EXTRACTION_CACHE) is
   * skipped, not paged through: at its first key the listing starts again after the greatest key it
   * can hold (`StartAfter`: "Amazon S3 starts listing after this specified key. StartAfter can be any
   * key in the bucket", docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html).
   */
  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    // The next request's page: the first, the next of a truncated listing, or the restart past the cache.
    let page: Pick<ListObjectsV2CommandInput, 'ContinuationToken' | 'StartAfter'> | undefined = {};
    let skipped = false;
    const strip = this.prefix ? this.prefix.length + 1 : 0;
    const { sdk, client } = await this.open();
    do {
      const res: ListObjectsV2CommandOutput = await client.send(new sdk.ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.key(prefix), ...page }));
      page = res.IsTruncated ? { ContinuationToken: res.NextContinuationToken } : undefined;
      for (const obj of res.Contents ?? []) {
        const key = obj.Key!.slice(strip);
        if (!listingSkips(prefix, key)) yield { key, size: obj.Size ?? 0 };
        else if (!skipped) {
          skipped = true;
          page = { StartAfter: this.key(PAST_EXTRACTION_CACHE) };
          break;
        }
        // else a key past the bound (its first character U+10FFFF): left out, not listed
      }
    } while (page);
  }

  async delete(key: string): Promise<void> {
    const { sdk, client } = await this.open();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
  }

  /** A PUT (or a multipart upload's completion) makes the object appear whole or not at all: nothing is left to sweep. */
  async sweepIncompleteWrites(): Promise<string[]> {
    return [];
  }
}

/** The greatest key the extraction cache can hold a member under (U+10FFFF is the greatest code point, so the last in UTF-8 order). */
const PAST_EXTRACTION_CACHE = `${EXTRACTION_CACHE}/\u{10FFFF}`;

function isMissing(err: unknown): boolean {
  const answer = s3Answer(err);
  return answer !== undefined && (answer.name === 'NoSuchKey' || answer.name === 'NotFound' || answer.status === 404);
}
