/**
 * The simulator as N GPUs serving one published model profile (SIM_GPU_PROFILE, SIM_GPUS): together
 * they hold at most `slots` requests each in flight (more are answered 429), so the endpoint's limit
 * is the profile's requests/s per GPU times N. A request of the mean output length takes
 * slots / requestsPerSecond, a longer reply proportionally longer, so N full GPUs complete the
 * published N x requestsPerSecond whatever the mix. SIM_GPU_SPEEDUP divides every latency to fit a
 * benchmark into minutes; ratios against the limit are unchanged by it.
 */

export interface GpuProfile {
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

export type GpuProfileName = keyof typeof GPU_PROFILES;

export class GpuFleet {
  private outputTokens = 0;
  private replies = 0;
  /** The latencies given so far, summed: the slot time the replies took. */
  busyMs = 0;

  constructor(
    readonly profile: GpuProfile,
    readonly gpus: number,
    readonly speedup = 1,
  ) {}

  /** Requests the fleet holds in flight at most. */
  get maxConcurrent(): number {
    return this.gpus * this.profile.slots;
  }

  /** Requests per second the fleet completes when full. */
  get requestsPerSecond(): number {
    return this.gpus * this.profile.requestsPerSecond * this.speedup;
  }

  /** The latency of a reply of `tokens` output tokens (counted into the running mean). */
  latencyMs(tokens: number): number {
    this.outputTokens += tokens;
    this.replies++;
    const mean = this.outputTokens / this.replies;
    const meanMs = (1000 * this.profile.slots) / this.profile.requestsPerSecond / this.speedup;
    const latency = mean > 0 ? (meanMs * tokens) / mean : meanMs;
    this.busyMs += latency;
    return latency;
  }
}

/** SIM_GPU_PROFILE, SIM_GPUS (default 1) and SIM_GPU_SPEEDUP (default 1); undefined without a profile. */
export function gpuFleetFromEnv(env: Record<string, string | undefined>): GpuFleet | undefined {
  const name = env.SIM_GPU_PROFILE?.trim();
  if (!name) return undefined;
  if (!(name in GPU_PROFILES)) throw new Error(`Invalid environment variable SIM_GPU_PROFILE=${JSON.stringify(name)}: known profiles are ${Object.keys(GPU_PROFILES).join(', ')}`);
  const number = (variable: string, fallback: number) => {
    const raw = env[variable]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (!(value > 0) || !Number.isFinite(value)) throw new Error(`Invalid environment variable ${variable}=${JSON.stringify(raw)}: expected a positive number`);
    return value;
  };
  const gpus = number('SIM_GPUS', 1);
  if (!Number.isInteger(gpus)) throw new Error(`Invalid environment variable SIM_GPUS=${JSON.stringify(env.SIM_GPUS)}: expected a whole number of GPUs`);
  return new GpuFleet(GPU_PROFILES[name as GpuProfileName], gpus, number('SIM_GPU_SPEEDUP', 1));
}
