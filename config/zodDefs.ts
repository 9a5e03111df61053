/**
 * How code that walks a zod schema reads it: a schema's definition (zod 4 keeps it at `_zod.def`,
 * https://zod.dev/packages/core), and the wrapper types whose `innerType` is the schema that says
 * what the value is. The config parser (parseConfig.ts) and the README coverage check walk schemas
 * through these, so a wrapper zod adds is added once.
 */
import type { z } from 'zod';

type ZodDef = Record<string, unknown> & { type: string };

export const defOf = (schema: z.ZodType): ZodDef => (schema as unknown as { _zod: { def: ZodDef } })._zod.def;

/** Wrapper types around one `innerType` (optional, default...): the value is the inner schema's. */
export const WRAPPER_TYPES: ReadonlySet<string> = new Set(['optional', 'nonoptional', 'default', 'prefault', 'nullable', 'readonly', 'catch']);
