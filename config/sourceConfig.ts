/**
 * The `sources[]` entries of a build config, assembled from the source types' registry
 * (sources/registry.ts): each type's own fields (sources/<type>/definition.ts) beside the fields
 * every source takes (config/sourceFields.ts). Pure and deterministic.
 *
 * Per-source defaults (sourceDefaults) are written into the parsed config, not applied later: the
 * resolved values are then part of the stored config and of its fingerprint, so a later release that
 * changes a default cannot silently mix two policies under one buildId.
 */
import { z } from 'zod';
import type { ImageConfig } from './imageConfig.js';
import { commonSourceFields, type DedupePolicy, type SourceDefaults } from './sourceFields.js';
import type { SourceDefinition } from '../sources/definition.js';
import { SOURCE_DEFINITIONS, sourceDefinition, type SourceType } from '../sources/registry.js';

/** The defaults written into a source's parsed config when it does not set the field itself. */
export function sourceDefaults(type: SourceType): SourceDefaults {
  return sourceDefinition(type).defaults;
}

/** A type's own fields override the common ones of the same name. */
type Merged<A, B> = Omit<A, keyof B> & B;
type SourceObject<D extends SourceDefinition> = z.ZodObject<Merged<ReturnType<typeof commonSourceFields<D['type']>>, D['fields']>, z.core.$strict>;
/** One object schema per definition, as a tuple (z.discriminatedUnion takes one). */
type SourceObjects<T extends readonly SourceDefinition[]> = { -readonly [K in keyof T]: SourceObject<T[K]> };

function sourceObject<D extends SourceDefinition>(d: D): SourceObject<D> {
  return z.object({ ...commonSourceFields(d.type, d.defaults), ...d.fields }).strict() as unknown as SourceObject<D>;
}

const sourceObjects = SOURCE_DEFINITIONS.map(sourceObject) as unknown as SourceObjects<typeof SOURCE_DEFINITIONS>;

export const sourceSchema = z
  .discriminatedUnion('type', sourceObjects)
  .superRefine((s, ctx) => {
    if (s.quota !== undefined && s.weight !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['weight'], message: 'set either quota (a sample count) or weight (a share of maxSamples), not both' });
    }
  })
  .transform(withDefaults);

export type SourceConfig = z.output<typeof sourceSchema>;
export type SourceConfigOf<T extends SourceType> = Extract<SourceConfig, { type: T }>;

/** Writes the type's image, constraint-type and dedupe defaults into the config. */
function withDefaults<S extends { type: SourceType; image?: Partial<ImageConfig>; constraintTypes?: string[]; dedupe?: DedupePolicy }>(s: S): S {
  const d = sourceDefaults(s.type);
  const dedupe = s.dedupe ?? d.dedupe;
  const image = { ...d.image, ...s.image };
  const constraintTypes = s.constraintTypes ?? (d.constraintTypes ? [...d.constraintTypes] : undefined);
  return {
    ...s,
    ...(Object.keys(image).length > 0 ? { image } : {}),
    ...(constraintTypes ? { constraintTypes } : {}),
    ...(dedupe ? { dedupe } : {}),
  };
}

/** The source's dedupe policy: its own, else its type's default. */
export function dedupePolicy(source: SourceConfig): DedupePolicy {
  return source.dedupe ?? sourceDefaults(source.type).dedupe;
}

/** The image settings for one source's samples: the build's, with the source's overrides on top. */
export function sourceImageConfig(build: ImageConfig, source: SourceConfig): ImageConfig {
  return { ...build, ...source.image };
}

/**
 * Each source's name in records, card and reports, by config index: its `name`, else its type, or
 * `<type>-<n>` (n from 1) for every source of a type the build lists more than once.
 */
export function sourceNames(sources: ReadonlyArray<{ type: string; name?: string }>): string[] {
  const count = (type: string) => sources.filter((s) => s.type === type).length;
  return sources.map((source, index) => {
    if (source.name !== undefined) return source.name;
    if (count(source.type) === 1) return source.type;
    return `${source.type}-${sources.slice(0, index + 1).filter((s) => s.type === source.type).length}`;
  });
}
