/**
 * The `sources[]` entries of a build config: which dataset, where, in which layout, and how many
 * samples it contributes. Pure and deterministic (imported by workflow code).
 */
import { z } from 'zod';

export const sourceSchema = z
  .object({
    type: z.literal('cc3m'),
    /** Dataset root: a local path or s3://bucket/prefix. */
    uri: z.string().min(1),
    /** Which img2dataset layout the root holds; 'auto' detects it. */
    layout: z.enum(['auto', 'webdataset', 'files', 'flat']).default('auto'),
    licenseNote: z.string().default('CC3M: images owned by their original publishers; captions CC BY 4.0 (Google)'),
  })
  .strict();
export type SourceConfig = z.infer<typeof sourceSchema>;
