/**
 * What a source type declares about itself, apart from its reader: its config fields, defaults,
 * layouts and documentation row. Pure (zod and config/ only), because the config schema is built
 * from these (config/sourceConfig.ts): like the registry that lists them (sources/registry.ts),
 * a definition sits at the config level of the layering, in its type's folder so that a source
 * type is one folder. The reader that goes with it is sources/<type>/reader.ts (sources/source.ts).
 */
import type { z } from 'zod';
import type { SourceDefaults } from '../config/sourceFields.js';

/** The type's row of the source table in docs/sources.md (generated, see sources/sourceDocs.ts). */
export interface SourceDocs {
  /** Markdown: the layouts read under `uri`, as released or as the Hub ships them. */
  layout: string;
  /** Markdown: where the sample's instruction comes from. */
  instruction: string;
  /** Hugging Face Hub repositories (or other homes) whose downloads this type reads. */
  hub: readonly string[];
}

export interface SourceDefinition<T extends string = string, F extends z.ZodRawShape = z.ZodRawShape> {
  type: T;
  /** The type's own config fields, beside the common ones (config/sourceFields.ts commonSourceFields). */
  fields: F;
  /** Written into the parsed config (licence note, image thresholds, constraint types, dedupe). */
  defaults: SourceDefaults;
  docs: SourceDocs;
}

/** Declares a source type; `const` keeps the literal type and field shapes for the config's types. */
export function defineSource<const T extends string, const F extends z.ZodRawShape>(definition: SourceDefinition<T, F>): SourceDefinition<T, F> {
  return definition;
}
