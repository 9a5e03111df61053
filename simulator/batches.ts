/**
 * The OpenAI Batch API, in memory: /v1/files (upload, metadata, content) and /v1/batches (create,
 * retrieve, cancel). A batch validates its input file when created, as OpenAI does (size and line
 * limits, one model, unique custom_ids, the batch's endpoint on every line), then moves through
 * validating → in_progress → finalizing with the clock and, batchCompletionMs after creation,
 * answers every line exactly as POST /v1/chat/completions would (the host runs each line). Lines
 * that fail go to the error file; with batchExpireRate some lines are left unfinished when the
 * window closes and the batch ends `expired`, the finished part in the output file.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { decideBatchExpiry, type FaultConfig } from './faults.js';
import { HttpError, readBody, readJson, send, sendJson } from './http.js';
import { sha256Hex } from './rng.js';

/** What POST /v1/chat/completions would have answered for one line. */
export interface LineResult {
  statusCode: number;
  body: unknown;
  usage?: { prompt_tokens: number; completion_tokens: number };
}

interface BatchHost {
  readonly seed: number;
  faults(): FaultConfig;
  /** Answers one input line as POST /v1/chat/completions would, counted in the stats as a batch line. */
  /** `customId`: the line's custom_id, which names what an engine's line asks for (llm/batch.ts). */
  executeBatchLine(body: unknown, customId: string): LineResult;
  /** Counts lines that never ran because the window closed or the batch was cancelled. */
  countUnrun(kind: 'expired' | 'cancelled', lines: number): void;
}

/** The only batch endpoint the simulator serves, and the only window OpenAI offers. */
const CHAT_ENDPOINT = '/v1/chat/completions';
const COMPLETION_WINDOW = '24h';
/** OpenAI's per-file upload limit; batch inputs are further limited by batchMaxBytes. */
const MAX_UPLOAD_BYTES = 512 * 1024 * 1024;
/** Enough to point at the problems without echoing a 50,000-line file back. */
const MAX_REPORTED_ERRORS = 100;

type FilePurpose = 'batch' | 'batch_output';

interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: FilePurpose;
  status: 'processed';
  expires_at: null;
  status_details: null;
}

interface BatchErrorItem {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';
const FINAL: ReadonlySet<BatchStatus> = new Set(['failed', 'completed', 'expired', 'cancelled']);

interface BatchObject {
  id: string;
  object: 'batch';
  endpoint: string;
  model: string | null;
  errors: { object: 'list'; data: BatchErrorItem[] } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  usage: { input_tokens: number; output_tokens: number; total_tokens: number } | null;
  metadata: Record<string, string> | null;
}

interface InputLine {
  custom_id: string;
  body: { model: string } & Record<string, unknown>;
}

interface BatchJob {
  batch: BatchObject;
  lines: InputLine[];
  createdMs: number;
  /** batchCompletionMs when the batch was created; later fault changes do not move it. */
  durationMs: number;
  timer?: NodeJS.Timeout;
}

const CreateBatchSchema = z
  .object({
    input_file_id: z.string().min(1),
    endpoint: z.string().min(1),
    completion_window: z.string().min(1),
    metadata: z.record(z.string(), z.string()).nullish(),
  })
  .loose();

const InputLineSchema = z
  .object({
    custom_id: z.string().min(1),
    method: z.string(),
    url: z.string(),
    body: z.object({ model: z.string().min(1) }).loose(),
  })
  .loose();

const EXPIRED_ERROR = { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' };

const seconds = (ms: number) => Math.floor(ms / 1000);

export class BatchService {
  private readonly files = new Map<string, { meta: FileObject; content: Buffer }>();
  private readonly jobs = new Map<string, BatchJob>();
  private counter = 0;

  constructor(private readonly host: BatchHost) {}

  /** Serves /v1/files* and /v1/batches*; false when the route is none of them. */
  async route(method: string, path: string, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const [root, collection, id, action, ...rest] = path.split('/').slice(1);
    if (root !== 'v1' || rest.length > 0) return false;
    const call = `${method} ${collection}${id ? '/:id' : ''}${action ? `/${action}` : ''}`;
    switch (call) {
      case 'POST files':
        sendJson(res, 200, await this.upload(req));
        return true;
      case 'GET files/:id':
        sendJson(res, 200, this.file(id!).meta);
        return true;
      case 'GET files/:id/content':
        send(res, 200, this.file(id!).content, 'application/octet-stream');
        return true;
      case 'POST batches':
        sendJson(res, 200, this.create(await readJson(req)));
        return true;
      case 'GET batches/:id':
        sendJson(res, 200, this.view(this.job(id!)));
        return true;
      case 'POST batches/:id/cancel':
        sendJson(res, 200, this.cancel(this.job(id!)));
        return true;
      default:
        return false;
    }
  }

  /** Stops pending completions so the server can close. */
  shutdown(): void {
    for (const job of this.jobs.values()) clearTimeout(job.timer);
  }

  private async upload(req: IncomingMessage): Promise<FileObject> {
    const type = req.headers['content-type'] ?? '';
    if (!type.startsWith('multipart/form-data')) throw new HttpError(400, 'Expected a multipart/form-data upload.');
    const body = await readBody(req, MAX_UPLOAD_BYTES);
    const form = await new Request('http://simulator/v1/files', { method: 'POST', headers: { 'content-type': type }, body: new Uint8Array(body) }).formData();
    const file = form.get('file');
    if (file === null || typeof file === 'string') throw new HttpError(400, "Missing the 'file' part.", 'invalid_request_error', null, {}, 'file');
    const purpose = form.get('purpose');
    if (purpose !== 'batch') {
      throw new HttpError(400, `The simulator only stores files with purpose 'batch', not ${JSON.stringify(purpose)}.`, 'invalid_request_error', null, {}, 'purpose');
    }
    return this.storeFile(file.name || 'upload.jsonl', 'batch', Buffer.from(await file.arrayBuffer())).meta;
  }

  private storeFile(filename: string, purpose: FilePurpose, content: Buffer) {
    const meta: FileObject = {
      id: this.nextId('file-'),
      object: 'file',
      bytes: content.length,
      created_at: seconds(Date.now()),
      filename,
      purpose,
      status: 'processed',
      expires_at: null,
      status_details: null,
    };
    const stored = { meta, content };
    this.files.set(meta.id, stored);
    return stored;
  }

  private file(id: string) {
    const stored = this.files.get(id);
    if (!stored) throw new HttpError(404, `No such File object: ${id}`, 'invalid_request_error', 'not_found', {}, 'id');
    return stored;
  }

  private job(id: string): BatchJob {
    const job = this.jobs.get(id);
    if (!job) throw new HttpError(404, `No such Batch object: ${id}`, 'invalid_request_error', 'not_found', {}, 'id');
    return job;
  }

  private create(body: unknown): BatchObject {
    const parsed = CreateBatchSchema.safeParse(body);
    if (!parsed.success) throw new HttpError(400, `Invalid batch request: ${z.prettifyError(parsed.error)}`);
    const request = parsed.data;
    if (request.endpoint !== CHAT_ENDPOINT) {
      throw new HttpError(400, `The simulator only runs batches for ${CHAT_ENDPOINT}.`, 'invalid_request_error', 'invalid_value', {}, 'endpoint');
    }
    if (request.completion_window !== COMPLETION_WINDOW) {
      throw new HttpError(400, `completion_window must be '${COMPLETION_WINDOW}'.`, 'invalid_request_error', 'invalid_value', {}, 'completion_window');
    }
    const input = this.file(request.input_file_id);
    if (input.meta.purpose !== 'batch') {
      throw new HttpError(400, `File ${input.meta.id} does not have purpose 'batch'.`, 'invalid_request_error', 'invalid_value', {}, 'input_file_id');
    }
    const now = Date.now();
    const faults = this.host.faults();
    const batch: BatchObject = {
      id: this.nextId('batch_'),
      object: 'batch',
      endpoint: request.endpoint,
      model: null,
      errors: null,
      input_file_id: input.meta.id,
      completion_window: request.completion_window,
      status: 'validating',
      output_file_id: null,
      error_file_id: null,
      created_at: seconds(now),
      in_progress_at: null,
      expires_at: seconds(now) + 24 * 3600,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: 0, completed: 0, failed: 0 },
      usage: null,
      metadata: request.metadata ?? null,
    };
    const job: BatchJob = { batch, lines: [], createdMs: now, durationMs: faults.batchCompletionMs };
    this.jobs.set(batch.id, job);
    const checked = parseBatchInput(input.content, faults);
    if ('errors' in checked) {
      Object.assign(batch, { status: 'failed', failed_at: seconds(now), errors: { object: 'list', data: checked.errors } });
      return { ...batch };
    }
    job.lines = checked.lines;
    batch.model = checked.lines[0]?.body.model ?? null;
    batch.request_counts.total = checked.lines.length;
    job.timer = setTimeout(() => this.finish(job), job.durationMs);
    return { ...batch };
  }

  /** The batch as of now: the clock moves it through the running phases until its timer ends it. */
  private view(job: BatchJob): BatchObject {
    const { batch } = job;
    if (FINAL.has(batch.status)) return { ...batch };
    const phase = (fraction: number) => job.createdMs + fraction * job.durationMs;
    const now = Date.now();
    if (batch.status === 'validating' && now >= phase(0.1)) Object.assign(batch, { status: 'in_progress', in_progress_at: seconds(phase(0.1)) });
    if (batch.status === 'in_progress' && now >= phase(0.9)) Object.assign(batch, { status: 'finalizing', finalizing_at: seconds(phase(0.9)) });
    return { ...batch };
  }

  private cancel(job: BatchJob): BatchObject {
    const { status } = this.view(job);
    if (FINAL.has(status)) throw new HttpError(400, `Cannot cancel a batch with status ${status}.`, 'invalid_request_error', 'invalid_state');
    job.batch.cancelling_at = seconds(Date.now());
    this.finish(job, Date.now());
    return { ...job.batch };
  }

  /**
   * Runs the lines and writes the result files. On cancel only the share of lines the clock says
   * are done so far runs; the others are left out of both files.
   */
  private finish(job: BatchJob, cancelledAt?: number): void {
    clearTimeout(job.timer);
    const { batch, lines } = job;
    const faults = this.host.faults();
    const runnable = cancelledAt === undefined ? lines.length : Math.floor(lines.length * Math.min(1, (cancelledAt - job.createdMs) / job.durationMs));
    const output: string[] = [];
    const errors: string[] = [];
    const usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    let expired = 0;
    for (const line of lines.slice(0, runnable)) {
      const id = sha256Hex(`${batch.id}\u0000${line.custom_id}`).slice(0, 24);
      const envelope = { id: `batch_req_${id}`, custom_id: line.custom_id };
      if (cancelledAt === undefined && decideBatchExpiry(faults, this.host.seed, batch.id, line.custom_id)) {
        expired++;
        errors.push(JSON.stringify({ ...envelope, response: null, error: EXPIRED_ERROR }));
        continue;
      }
      const result = this.host.executeBatchLine(line.body, line.custom_id);
      usage.input_tokens += result.usage?.prompt_tokens ?? 0;
      usage.output_tokens += result.usage?.completion_tokens ?? 0;
      const response = { status_code: result.statusCode, request_id: `req_${id}`, body: result.body };
      (result.statusCode === 200 ? output : errors).push(JSON.stringify({ ...envelope, response, error: null }));
    }
    this.host.countUnrun('expired', expired);
    this.host.countUnrun('cancelled', lines.length - runnable);
    usage.total_tokens = usage.input_tokens + usage.output_tokens;
    const now = seconds(Date.now());
    const status: BatchStatus = cancelledAt !== undefined ? 'cancelled' : expired > 0 ? 'expired' : 'completed';
    Object.assign(batch, {
      status,
      output_file_id: this.resultFile(batch.id, 'output', output),
      error_file_id: this.resultFile(batch.id, 'error', errors),
      request_counts: { total: lines.length, completed: output.length, failed: errors.length },
      usage,
      in_progress_at: batch.in_progress_at ?? seconds(job.createdMs),
      finalizing_at: batch.finalizing_at ?? (status === 'cancelled' ? null : now),
      [`${status}_at`]: now,
    });
  }

  /** Like OpenAI, a result file exists only when it has lines. */
  private resultFile(batchId: string, kind: 'output' | 'error', lines: string[]): string | null {
    if (lines.length === 0) return null;
    return this.storeFile(`${batchId}_${kind}.jsonl`, 'batch_output', Buffer.from(`${lines.join('\n')}\n`)).meta.id;
  }

  private nextId(prefix: string): string {
    return `${prefix}${sha256Hex(`${this.host.seed}\u0000${prefix}\u0000${++this.counter}`).slice(0, 24)}`;
  }
}

/** Checks an input file against the limits and OpenAI's line rules; errors name the line. */
function parseBatchInput(content: Buffer, limits: Pick<FaultConfig, 'batchMaxRequests' | 'batchMaxBytes'>): { lines: InputLine[] } | { errors: BatchErrorItem[] } {
  const fail = (code: string, message: string, line: number | null = null): BatchErrorItem => ({ code, message, param: null, line });
  if (content.length > limits.batchMaxBytes) {
    return { errors: [fail('file_too_large', `The input file is ${content.length} bytes; a batch input file may be at most ${limits.batchMaxBytes} bytes.`)] };
  }
  const texts = content.toString('utf8').split('\n');
  const numbered = texts.map((text, index) => ({ text, line: index + 1 })).filter(({ text }) => text.trim() !== '');
  if (numbered.length === 0) return { errors: [fail('empty_file', 'The input file has no requests.')] };
  if (numbered.length > limits.batchMaxRequests) {
    return { errors: [fail('too_many_requests', `The input file has ${numbered.length} requests; a batch may hold at most ${limits.batchMaxRequests}.`)] };
  }
  const errors: BatchErrorItem[] = [];
  const lines: InputLine[] = [];
  const seen = new Set<string>();
  for (const { text, line } of numbered) {
    if (errors.length >= MAX_REPORTED_ERRORS) break;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      errors.push(fail('invalid_json_line', 'This line is not valid JSON.', line));
      continue;
    }
    const parsed = InputLineSchema.safeParse(json);
    if (!parsed.success) {
      errors.push(fail('invalid_request', `Invalid request line: ${z.prettifyError(parsed.error)}`, line));
      continue;
    }
    const { custom_id, method, url, body } = parsed.data;
    const model = lines[0]?.body.model;
    if (method !== 'POST') errors.push(fail('invalid_method', `method must be POST, not ${method}.`, line));
    else if (url !== CHAT_ENDPOINT) errors.push(fail('mismatched_endpoint', `url ${url} does not match the batch endpoint ${CHAT_ENDPOINT}.`, line));
    else if (seen.has(custom_id)) errors.push(fail('duplicate_custom_id', `custom_id ${custom_id} appears more than once.`, line));
    else if (model !== undefined && body.model !== model) {
      errors.push(fail('mismatched_model', `model ${body.model} differs from ${String(model)}: a batch file may use one model only.`, line));
    } else {
      seen.add(custom_id);
      lines.push({ custom_id, body });
    }
  }
  return errors.length > 0 ? { errors } : { lines };
}
