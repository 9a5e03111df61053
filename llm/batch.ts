/**
 * The OpenAI Batch API (/v1/files + /v1/batches; also served by the simulator, vLLM's and other
 * gateways), as steps a Temporal activity takes one at a time and describes in small JSON:
 * planBatchFiles / submitBatches (requests -> files -> batch ids), pollBatch (-> BatchProgress),
 * collectBatch (-> an outcome per custom_id). Requests are ModelCaller.prepare() bodies keyed by
 * batchCustomId(sample, stage, kind, resubmission); an ok reply goes through ModelCaller.storeReply() into
 * the cache, where the synchronous pipeline finds it. One call targets one endpoint (base URL + key);
 * files are split per model, since a batch file may use one model only.
 */
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import OpenAI, { toFile, type APIError } from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { MODEL_ROLES, type ModelRole } from '../config/modelsConfig.js';
import { isPromptKind, type PromptKind } from '../domain/promptKinds.js';
import { TransientError } from '../domain/errors.js';
import type { ResolvedEndpoint } from './resolvedEndpoint.js';
import { permanentError } from './endpointError.js';
import { classifyFailure } from './retryPolicy.js';
import { lastAttemptError } from './sendCompletion.js';

interface BatchLimits {
  maxRequests: number;
  maxBytes: number;
}

/** OpenAI's limits per batch input file. */
const OPENAI_BATCH_LIMITS: BatchLimits = { maxRequests: 50_000, maxBytes: 200 * 1024 * 1024 };

const ENDPOINT = '/v1/chat/completions';
const COMPLETION_WINDOW = '24h';
/** Reads are idempotent, so the SDK may retry them; creating files and batches is left to the activity's retry. */
const READ_OPTIONS = { maxRetries: 2 };
/** The attempts of one call: the client (endpoint.ts's clientFor) makes none of its own but those READ_OPTIONS asks for. */
const READ_ATTEMPTS = READ_OPTIONS.maxRetries + 1;
const CREATE_ATTEMPTS = 1;

/**
 * A Batch API request that failed: which one (as the server's log shows it) and after how many
 * attempts. The SDK's own message ("500 Internal server error", "Connection error.") names neither
 * the endpoint nor the role; the activity turns this into the one line that does (batchCallError).
 */
export class BatchCallFailed extends TransientError {
  override name = 'BatchCallFailed';
  constructor(
    readonly call: string,
    readonly attempts: number,
    override readonly cause: unknown,
  ) {
    super(`Batch API ${call}: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** `request`, its failure a BatchCallFailed naming the call. */
async function batchCall<T>(call: string, attempts: number, request: () => PromiseLike<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    throw new BatchCallFailed(call, attempts, err);
  }
}

/**
 * The one line of a failed Batch API call, as on the synchronous path (sendCompletion.ts), with the
 * call named after the role: "<role>: Batch API POST /files: model endpoint URL (model M): HTTP 500:
 * <excerpt>, 1 attempt" (transient: Temporal retries the activity), or the permanent line of a
 * refused key, unknown model or spent quota (non-retryable EndpointError). OpenAI's Batch API
 * answers its file and batch calls with the same error bodies and statuses as chat completions
 * (https://platform.openai.com/docs/api-reference/batch, error codes as in endpointError.ts).
 */
export function batchCallError(err: unknown, s: { role: ModelRole; endpoint: ResolvedEndpoint; apiKeyEnv: string; timeoutMs: number }): unknown {
  if (!(err instanceof BatchCallFailed)) return err;
  const who = `${s.role}: Batch API ${err.call}`;
  if (classifyFailure(err.cause) === 'permanent') return permanentError(err.cause as APIError, s.endpoint, s.apiKeyEnv, who);
  return lastAttemptError(err.cause, { who, endpoint: s.endpoint, timeoutMs: s.timeoutMs }, err.attempts);
}

export interface BatchRequest {
  custom_id: string;
  body: ChatCompletionCreateParamsNonStreaming;
}

export interface BatchFile {
  model: string;
  customIds: string[];
  bytes: number;
  jsonl: string;
}

// ---------------------------------------------------------------------------------------
// custom_id

interface BatchCallId {
  sampleId: string;
  stage: ModelRole;
  /** What the line asks for (its prompt's kind): a batch line has no headers, so its id names it (the simulator reads it). */
  kind: PromptKind;
  /** 0 for the first submission (docs/architecture.md, Glossary: resubmission). */
  resubmission: number;
}

/** `mmif:<stage>:<kind>:<resubmission>:<sampleId>`; the sample id goes last, so it may contain anything. */
export function batchCustomId({ sampleId, stage, kind, resubmission }: BatchCallId): string {
  if (!Number.isInteger(resubmission) || resubmission < 0) throw new Error(`batch resubmission must be a non-negative integer, not ${resubmission}`);
  return `mmif:${stage}:${kind}:${resubmission}:${sampleId}`;
}

/** The inverse of batchCustomId; undefined for ids it did not make. */
export function parseBatchCustomId(customId: string): BatchCallId | undefined {
  const match = /^mmif:([a-z]+):([a-z_]+):(\d+):([\s\S]+)$/.exec(customId);
  const stage = MODEL_ROLES.find((s) => s === match?.[1]);
  const kind = match?.[2];
  if (!match || !stage || !isPromptKind(kind)) return undefined;
  return { sampleId: match[4]!, stage, kind, resubmission: Number(match[3]) };
}

// ---------------------------------------------------------------------------------------
// Input files (pure)

/**
 * JSONL input files within `limits`: one model per file, and a new file whenever the next line
 * would pass the request count or byte size. Request order is kept within a model.
 */
export function planBatchFiles(requests: readonly BatchRequest[], limits: BatchLimits = OPENAI_BATCH_LIMITS): BatchFile[] {
  const seen = new Set<string>();
  const files: BatchFile[] = [];
  /** The file being filled for each model, its lines joined only once it is full. */
  const filling = new Map<string, { model: string; customIds: string[]; bytes: number; lines: string[] }>();
  const close = ({ lines, ...file }: { model: string; customIds: string[]; bytes: number; lines: string[] }) => files.push({ ...file, jsonl: lines.join('') });
  for (const { custom_id, body } of requests) {
    if (seen.has(custom_id)) throw new Error(`duplicate batch custom_id ${custom_id}`);
    seen.add(custom_id);
    const line = `${JSON.stringify({ custom_id, method: 'POST', url: ENDPOINT, body })}\n`;
    const bytes = Buffer.byteLength(line);
    if (bytes > limits.maxBytes) throw new Error(`batch request ${custom_id} is ${bytes} bytes, over the ${limits.maxBytes}-byte file limit`);
    let file = filling.get(body.model);
    if (file && (file.customIds.length >= limits.maxRequests || file.bytes + bytes > limits.maxBytes)) {
      close(file);
      file = undefined;
    }
    if (!file) {
      file = { model: body.model, customIds: [], bytes: 0, lines: [] };
      filling.set(body.model, file);
    }
    file.customIds.push(custom_id);
    file.lines.push(line);
    file.bytes += bytes;
  }
  for (const file of filling.values()) close(file);
  return files;
}

// ---------------------------------------------------------------------------------------
// Submitting and polling

interface SubmittedBatch {
  batchId: string;
  inputFileId: string;
  model: string;
  requests: number;
}

/** Which requests each batch submitted so far covers: what a retried submission must not send again. */
export interface SubmissionLog {
  batches: Array<{ batchId: string; customIds: string[] }>;
}

/**
 * Uploads `requests` as one or more files and starts a batch for each. With `record`, each batch is
 * recorded (the grown `log`) before the next file goes out, and requests an earlier attempt's log
 * already covers are skipped: a retry passing the recorded log back never submits a request twice
 * (only a crash between creating a batch and recording it can). Returns the batches of this call.
 */
export async function submitBatches(
  client: OpenAI,
  requests: readonly BatchRequest[],
  options: {
    limits?: BatchLimits;
    metadata?: Record<string, string>;
    log?: SubmissionLog;
    record?: (log: SubmissionLog) => Promise<void>;
    /** Called before each file: a cancelled submission stops between files. */
    beforeFile?: () => void;
  } = {},
): Promise<SubmittedBatch[]> {
  const log: SubmissionLog = { batches: [...(options.log?.batches ?? [])] };
  const covered = new Set(log.batches.flatMap((b) => b.customIds));
  const submitted: SubmittedBatch[] = [];
  for (const file of planBatchFiles(
    requests.filter((r) => !covered.has(r.custom_id)),
    options.limits,
  )) {
    options.beforeFile?.();
    const batch = await submitBatchFile(client, file, options.metadata);
    submitted.push(batch);
    log.batches.push({ batchId: batch.batchId, customIds: file.customIds });
    await options.record?.(log);
  }
  return submitted;
}

export async function submitBatchFile(client: OpenAI, file: BatchFile, metadata?: Record<string, string>): Promise<SubmittedBatch> {
  const jsonl = await toFile(Buffer.from(file.jsonl), `mmif-batch-${file.model.replace(/[^\w.-]+/g, '_')}.jsonl`, { type: 'application/jsonl' });
  const upload = await batchCall('POST /files', CREATE_ATTEMPTS, () => client.files.create({ file: jsonl, purpose: 'batch' }));
  const batch = await batchCall('POST /batches', CREATE_ATTEMPTS, () =>
    client.batches.create({
      input_file_id: upload.id,
      endpoint: ENDPOINT,
      completion_window: COMPLETION_WINDOW,
      ...(metadata ? { metadata } : {}),
    }),
  );
  return { batchId: batch.id, inputFileId: upload.id, model: file.model, requests: file.customIds.length };
}

export interface BatchProgress {
  batchId: string;
  status: OpenAI.Batches.Batch['status'];
  /** completed, failed, expired or cancelled: nothing will change any more. */
  done: boolean;
  counts: { total: number; completed: number; failed: number };
  outputFileId?: string;
  errorFileId?: string;
  /**
   * Why the batch failed validation (status failed), one message per problem: the batch object's
   * `errors.data`, each {code, line, message, param} (OpenAI's BatchError,
   * node_modules/openai/resources/batches.d.ts; https://platform.openai.com/docs/api-reference/batch/object).
   */
  errors: string[];
}

const DONE: ReadonlySet<BatchProgress['status']> = new Set(['completed', 'failed', 'expired', 'cancelled']);

export async function pollBatch(client: OpenAI, batchId: string): Promise<BatchProgress> {
  return progressOf(await batchCall(`GET /batches/${batchId}`, READ_ATTEMPTS, () => client.batches.retrieve(batchId, READ_OPTIONS)));
}

/** Stops a batch; the lines finished so far can still be collected once it is done. */
export async function cancelBatch(client: OpenAI, batchId: string): Promise<BatchProgress> {
  return progressOf(await batchCall(`POST /batches/${batchId}/cancel`, CREATE_ATTEMPTS, () => client.batches.cancel(batchId)));
}

function progressOf(batch: OpenAI.Batches.Batch): BatchProgress {
  return {
    batchId: batch.id,
    status: batch.status,
    done: DONE.has(batch.status),
    counts: batch.request_counts ?? { total: 0, completed: 0, failed: 0 },
    ...(batch.output_file_id ? { outputFileId: batch.output_file_id } : {}),
    ...(batch.error_file_id ? { errorFileId: batch.error_file_id } : {}),
    errors: (batch.errors?.data ?? []).map((e) => `${e.line != null ? `line ${e.line}: ` : ''}${e.code ?? 'error'}: ${e.message ?? ''}`),
  };
}

// ---------------------------------------------------------------------------------------
// Results

interface BatchLineError {
  code: string | null;
  message: string;
  /** The HTTP status the request got, when it ran. */
  httpStatus?: number;
}

/**
 * A custom_id missing from the results never ran (a cancelled batch, a failed one): treat it like
 * `expired`, i.e. resubmit it or let the synchronous path make the call.
 */
type BatchOutcome = { status: 'ok'; reply: ChatCompletion } | { status: 'failed'; error: BatchLineError } | { status: 'expired' };

/** The outcome of every line in a finished batch's output and error files, by custom_id. */
export async function collectBatch(client: OpenAI, batchId: string): Promise<Map<string, BatchOutcome>> {
  const progress = await pollBatch(client, batchId);
  if (!progress.done) throw new Error(`batch ${batchId} is still ${progress.status}; collect it once it is done`);
  const outcomes = new Map<string, BatchOutcome>();
  for (const fileId of [progress.outputFileId, progress.errorFileId]) {
    if (!fileId) continue;
    const content = await batchCall(`GET /files/${fileId}/content`, READ_ATTEMPTS, () => client.files.content(fileId, READ_OPTIONS));
    if (!content.body) continue;
    // Output files grow with the replies; read them a line at a time rather than as one string.
    const lines = createInterface({ input: Readable.fromWeb(content.body as ReadableStream<Uint8Array>), crlfDelay: Infinity });
    for await (const line of lines) {
      if (line.trim() === '') continue;
      const [customId, outcome] = parseBatchResultLine(line);
      outcomes.set(customId, outcome);
    }
  }
  return outcomes;
}

const ResultLineSchema = z
  .object({
    custom_id: z.string(),
    response: z.object({ status_code: z.number().int(), body: z.unknown() }).loose().nullish(),
    error: z.object({ code: z.string().nullish(), message: z.string().nullish() }).loose().nullish(),
  })
  .loose();
const ErrorBodySchema = z.object({ error: z.object({ code: z.string().nullish(), message: z.string().nullish() }).loose() }).loose();
const CompletionSchema = z.object({ choices: z.array(z.unknown()) }).loose();

/**
 * One line of an output or error file. OpenAI reports two kinds of failure: a request that ran and
 * got an HTTP error has `response.status_code` ≠ 200 and the error in the body; one that did not
 * run has a top-level `error` (`batch_expired` when the window closed first).
 */
export function parseBatchResultLine(line: string): [string, BatchOutcome] {
  const { custom_id, response, error } = ResultLineSchema.parse(JSON.parse(line));
  if (error) {
    if (error.code === 'batch_expired') return [custom_id, { status: 'expired' }];
    return [custom_id, { status: 'failed', error: { code: error.code ?? null, message: error.message ?? 'batch request failed' } }];
  }
  if (!response) return [custom_id, { status: 'failed', error: { code: null, message: 'neither a response nor an error' } }];
  if (response.status_code === 200) {
    const reply = CompletionSchema.safeParse(response.body);
    if (reply.success) return [custom_id, { status: 'ok', reply: reply.data as unknown as ChatCompletion }];
    return [custom_id, { status: 'failed', error: { code: null, message: 'a 200 response without a chat completion', httpStatus: 200 } }];
  }
  const body = ErrorBodySchema.safeParse(response.body);
  return [
    custom_id,
    {
      status: 'failed',
      error: {
        code: body.success ? (body.data.error.code ?? null) : null,
        message: body.success ? (body.data.error.message ?? `HTTP ${response.status_code}`) : `HTTP ${response.status_code}`,
        httpStatus: response.status_code,
      },
    },
  ];
}
