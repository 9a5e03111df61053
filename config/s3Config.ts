/** Endpoint options for every s3:// URI of a build or eval config (credentials come from the AWS env). */
import { z } from 'zod';

export const s3Schema = z
  .object({
    endpoint: z.string().url().optional(),
    region: z.string().optional(),
    forcePathStyle: z.boolean().optional(),
  })
  .strict();
