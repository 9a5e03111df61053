/** An id a user picks (buildId, evalId) that becomes part of paths and workflow ids. */
import { z } from 'zod';

export const slug = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'use letters, digits, ".", "_" or "-"');
