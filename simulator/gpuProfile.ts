/**
 * The simulator as N GPUs serving one published model profile (SIM_GPU_PROFILE, SIM_GPUS): together
 * they hold at most `slots` requests each in flight (more are answered 429), so the endpoint's limit
 * is the profile's requests/s per GPU times N. A request's slot time follows its GPU work (RequestWork,
 * in LLM-token units, the weights below): a request of the mean work *with nothing cached* takes
 * slots / requestsPerSecond, so N full GPUs complete the published N x requestsPerSecond on the
 * cache-off workload the profile was measured on, and more where a cached prefix or an image already
 * encoded saves work. SIM_GPU_SPEEDUP divides every latency to fit a benchmark into minutes; ratios
 * against the limit are unchanged by it. The model's assumptions: docs/architecture.md (simulator).
 */
import { z } from 'zod';
import { ConfigError } from '../config/configError.js';
import { envNumber, positiveEnvNumber } from '../config/envNumber.js';

interface GpuProfile {
  /** Requests per second one GPU completes when full. */
  requestsPerSecond: number;
  /** Requests in flight that fill one GPU (its KV cache). */
  slots: number;
}

/**
 * Qwen2.5-VL-7B on one GPU, MMMU, 505 requests: SGLang 8.59 requests/s (vLLM 7.57) in the
 * benchmarks of sgl-project/sglang PRs #9812 and #10527; an H100 holds ~905k KV tokens for it
 * (QwenLM/Qwen3-VL issue #1057) and a request ~2.7k vision tokens for a 1080p image (SGLang #10959),
 * so ~256 requests in flight saturate it.
 */
export const GPU_PROFILES = {
  'qwen2.5-vl-7b': { requestsPerSecond: 8.59, slots: 256 },
} as const satisfies Record<string, GpuProfile>;

type GpuProfileName = keyof typeof GPU_PROFILES;

/**
 * Work of one vision token in the encoder, against one token through the LLM: Qwen2.5-VL's ViT has
 * 675M parameters and runs on 4 patches per vision token (2x2 merge), the LLM 7.6B parameters per
 * token (Qwen2.5-VL technical report, arXiv 2502.13923, table 1 and section 2.1); at ~2 FLOPs per
 * parameter per token that is 4 x 0.675 / 7.6 = 0.355.
 */
export const ENCODER_WORK_PER_IMAGE_TOKEN = 0.355;

/**
 * Work left of a prompt token served from the prefix cache: in SGLang's cache-hit benchmark
 * (sgl-project/sglang PR #21899, Qwen3-VL-8B, a 907-token prompt with a 720p image) the first request
 * took 836 ms to its first token and the identical ones, 99.9% cached, 76 ms: 0.09 of it.
 */
export const CACHED_TOKEN_WORK = 0.09;

/** What one request asks of a GPU, in tokens. */
export interface RequestWork {
  promptTokens: number;
  /** Of promptTokens, those the replica's prefix cache served. */
  cachedTokens: number;
  /** Of promptTokens, the image's. */
  imageTokens: number;
  /** Whether the replica had to run the image through the vision encoder (not in its encoder cache). */
  encoded: boolean;
  outputTokens: number;
}

/**
 * The request's work in LLM-token units: every token through the LLM weighs 1, prefill or decode (at
 * hundreds of requests in flight decode is batched to the compute bound, the assumption the profile's
 * single throughput figure makes), a cached prompt token CACHED_TOKEN_WORK, an encoded image token
 * ENCODER_WORK_PER_IMAGE_TOKEN more.
 */
export function workOf(w: RequestWork): number {
  const uncached = w.promptTokens - w.cachedTokens;
  return uncached + CACHED_TOKEN_WORK * w.cachedTokens + (w.encoded ? ENCODER_WORK_PER_IMAGE_TOKEN * w.imageTokens : 0) + w.outputTokens;
}

/** The same request's work with nothing cached: what the profile's benchmark (caches off) measured. */
function coldWorkOf(w: RequestWork): number {
  return workOf({ ...w, cachedTokens: 0, encoded: w.imageTokens > 0 });
}

export class GpuFleet {
  private coldWork = 0;
  private replies = 0;
  /** The latencies given so far, summed: the slot time the replies took. */
  busyMs = 0;

  constructor(
    readonly profile: GpuProfile,
    readonly gpus: number,
    readonly speedup = 1,
  ) {}

  /** Another fleet of the same GPUs, with nothing served yet (another replica's). */
  fresh(): GpuFleet {
    return new GpuFleet(this.profile, this.gpus, this.speedup);
  }

  /** Requests the fleet holds in flight at most. */
  get maxConcurrent(): number {
    return this.gpus * this.profile.slots;
  }

  /** Requests per second the fleet completes when full. */
  get requestsPerSecond(): number {
    return this.gpus * this.profile.requestsPerSecond * this.speedup;
  }

  /** The latency of a request of this work: its share of the running mean of the cold work (counted into it). */
  latencyMs(request: RequestWork): number {
    this.coldWork += coldWorkOf(request);
    this.replies++;
    const mean = this.coldWork / this.replies;
    const meanMs = (1000 * this.profile.slots) / this.profile.requestsPerSecond / this.speedup;
    const latency = mean > 0 ? (meanMs * workOf(request)) / mean : meanMs;
    this.busyMs += latency;
    return latency;
  }
}

/** SIM_GPU_PROFILE, SIM_GPUS (default 1) and SIM_GPU_SPEEDUP (default 1); undefined without a profile. */
export function gpuFleetFromEnv(env: Record<string, string | undefined>): GpuFleet | undefined {
  const name = env.SIM_GPU_PROFILE?.trim();
  if (!name) return undefined;
  if (!(name in GPU_PROFILES))
    throw new ConfigError(`Invalid environment variable SIM_GPU_PROFILE=${JSON.stringify(name)}: known profiles are ${Object.keys(GPU_PROFILES).join(', ')}`);
  const gpus = envNumber('SIM_GPUS', env, z.number().int().positive(), 'expected a whole number of GPUs') ?? 1;
  return new GpuFleet(GPU_PROFILES[name as GpuProfileName], gpus, positiveEnvNumber('SIM_GPU_SPEEDUP', env) ?? 1);
}
