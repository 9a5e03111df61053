/** The Temporal retry policy of every pipeline activity (builds and evals); after the last attempt the shard (or eval) fails. */
import { z } from 'zod';

export const retrySchema = z
  .object({
    maximumAttempts: z.number().int().min(1).max(100).default(8),
    initialIntervalSeconds: z.number().positive().default(2),
    maximumIntervalSeconds: z.number().positive().default(120),
    /** A worker silent this long (killed, partitioned) loses its activities to another worker. */
    heartbeatTimeoutSeconds: z.number().positive().default(30),
  })
  .strict()
  .prefault({});
