/**
 * The S3 service's answer to a request, recognized without loading @aws-sdk/client-s3: an error the
 * SDK throws for a reply carries `$fault` ('client' or 'server') and `$metadata`, which is the test
 * the SDK's own `ServiceException.isInstance` makes (@smithy/core, submodules/client/smithy-client/
 * exceptions.ts). A connection that failed before any reply is not an answer. Commands that open only
 * local stores so never load the S3 client (ADR 0070).
 */

interface S3Answer {
  /** The S3 error code (NoSuchKey, AccessDenied...), the SDK's error name. */
  name: string;
  /** The reply's HTTP status, when the SDK recorded one. */
  status: number | undefined;
}

export function s3Answer(err: unknown): S3Answer | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as Error & { $fault?: unknown; $metadata?: { httpStatusCode?: number } };
  if ((e.$fault !== 'client' && e.$fault !== 'server') || !e.$metadata) return undefined;
  return { name: e.name, status: e.$metadata.httpStatusCode };
}
