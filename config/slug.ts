/** An id a user picks (buildId, evalId) that becomes part of paths and workflow ids. */
import { z } from 'zod';

/** The longest id: a path segment and part of workflow ids (`<buildId>/shard-<n>`, `<buildId>@<date>`), well within either's limit. */
export const ID_MAX = 100;

export const slug = z
  .string()
  .min(1)
  .max(ID_MAX)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'use letters, digits, ".", "_" or "-"');
