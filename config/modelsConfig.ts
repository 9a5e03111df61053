/**
 * Model endpoints: one per model role (`models.default` and optional per-role overrides), shared
 * by build configs and (one endpoint each for the model and the judge) eval configs.
 */
import { z } from 'zod';

/**
 * Model roles: what a model call is for, which picks its endpoint (`models.<role>`); a stage
 * (config/stages.ts) may call several. `richness` is the VLM tag count that can select images at planning (sources[].richness).
 */
export const MODEL_ROLES = ['instruction', 'constraints', 'compatibility', 'verifier', 'answer', 'rejected', 'judge', 'richness'] as const;
export type ModelRole = (typeof MODEL_ROLES)[number];

/** Requests in flight to an endpoint whose config names no `concurrency` (and to one a model caller is given no limits for). */
export const DEFAULT_CONCURRENCY = 16;

/**
 * One replica of an endpoint (several servers of one model, e.g. vLLM data-parallel instances): its
 * base URL, or an object with the base URL and its own limits (unset: the endpoint's).
 */
const replicaSchema = z.union([
  z.string().url(),
  z
    .object({
      baseUrl: z.string().url(),
      concurrency: z.number().int().min(1).max(1024).optional(),
      requestsPerMinute: z.number().positive().optional(),
      tokensPerMinute: z.number().positive().optional(),
    })
    .strict(),
]);

export const endpointSchema = z
  .object({
    model: z.string().min(1),
    /** OpenAI-compatible base URL, e.g. http://localhost:8000/v1. Unset: the worker's OPENAI_BASE_URL. */
    baseUrl: z.string().url().optional(),
    /**
     * Several replicas of this model instead of one `baseUrl`: each sample's requests go to one of them,
     * chosen by its image's content hash (docs/endpoints.md). An entry is a URL or `{ baseUrl, concurrency?,
     * requestsPerMinute?, tokensPerMinute? }`; limits unset there are the endpoint's, per replica.
     */
    baseUrls: z.array(replicaSchema).min(1).optional(),
    /** Name of the env var holding the API key (never the key itself). */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/)
      .default('OPENAI_API_KEY'),
    /** Requests in flight to this endpoint, all workers of the task queue together (leased by demand; AIMD adapts below it on 429s). */
    concurrency: z.number().int().min(1).max(1024).default(DEFAULT_CONCURRENCY),
    /** Client-side pacing; learned from x-ratelimit-* headers when the provider sends them. */
    requestsPerMinute: z.number().positive().optional(),
    tokensPerMinute: z.number().positive().optional(),
    /**
     * Send this role's first call per sample through the provider's Batch API (/v1/files +
     * /v1/batches; half price at OpenAI), waiting durably; for instruction, constraints, answer,
     * rejected. One server only: refused with several `baseUrls`.
     */
    batch: z.boolean().default(false),
    /**
     * Sent as `reasoning_effort` to a model that thinks before answering (OpenAI's o-series and
     * gpt-5 family, and servers that accept it); unset: the model's default. Refused by the endpoint:
     * dropped and remembered like any refused parameter (docs/endpoints.md).
     */
    reasoningEffort: z.enum(['none', 'minimal', 'low', 'medium', 'high']).optional(),
    /**
     * An Azure OpenAI deployment: `baseUrl` is then the resource's endpoint
     * (https://<resource>.openai.azure.com), requests go to /openai/deployments/<deployment> with
     * `api-version` and the key in an `api-key` header (the SDK's AzureOpenAI client).
     */
    azure: z
      .object({
        /** The deployment's name; unset: `model`. */
        deployment: z.string().min(1).optional(),
        /** The REST API version, e.g. "2024-10-21". */
        apiVersion: z.string().min(1),
      })
      .strict()
      .optional(),
    /**
     * Run the activities of the stages that call this role on their own task queue (one per endpoint), whose workers cap
     * activities/s across all of them (MMIF_TASK_QUEUE_ACTIVITIES_PER_SECOND); default: the build's queue.
     */
    taskQueue: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((e, ctx) => {
    if (!e.baseUrls) return;
    if (e.baseUrl !== undefined) ctx.addIssue({ code: 'custom', path: ['baseUrls'], message: 'set baseUrl or baseUrls, not both' });
    if (e.azure) ctx.addIssue({ code: 'custom', path: ['baseUrls'], message: 'an Azure deployment has one baseUrl (its resource), not baseUrls' });
    const urls = e.baseUrls.map((r) => (typeof r === 'string' ? r : r.baseUrl).replace(/\/+$/, ''));
    const twice = urls.find((u, i) => urls.indexOf(u) !== i);
    if (twice) ctx.addIssue({ code: 'custom', path: ['baseUrls'], message: `replica ${twice} is listed twice` });
    // docs/adr/0073-batch-api-on-one-server.md: the servers run as replicas serve no /v1/batches.
    if (e.batch && e.baseUrls.length > 1)
      ctx.addIssue({
        code: 'custom',
        path: ['batch'],
        message: `the Batch API is not used with several replicas (baseUrls names ${e.baseUrls.length}): vLLM and SGLang serve no /v1/batches, and a batch sent to one replica would warm only its caches; leave batch off (each sample's requests then go to its image's replica)`,
      });
  });
export type EndpointConfig = z.infer<typeof endpointSchema>;

/** A build's `models`: the default endpoint and any per-role override. */
export const modelsSchema = z
  .object({
    default: endpointSchema,
    instruction: endpointSchema.optional(),
    constraints: endpointSchema.optional(),
    compatibility: endpointSchema.optional(),
    verifier: endpointSchema.optional(),
    answer: endpointSchema.optional(),
    rejected: endpointSchema.optional(),
    judge: endpointSchema.optional(),
    richness: endpointSchema.optional(),
  })
  .strict();
