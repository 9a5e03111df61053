/** Image checks and normalization settings: build-wide, and overridable per source. */
import { z } from 'zod';

export const imageSchema = z
  .object({
    /** Decompression-bomb guard handed to sharp's limitInputPixels. */
    maxInputPixels: z.number().int().positive().default(64_000_000),
    minShortSide: z.number().int().positive().default(224),
    maxAspectRatio: z.number().min(1).default(3),
    /** Images whose every channel has a standard deviation below this are "blank". */
    minChannelStdDev: z.number().nonnegative().default(6),
    maxLongSide: z.number().int().positive().default(1024),
    jpegQuality: z.number().int().min(1).max(100).default(90),
  })
  .strict();
export type ImageConfig = z.infer<typeof imageSchema>;
