/**
 * Every InputError class (domain/errors.ts: a permanent error the user fixes in the config, the data
 * or the environment), for the CLI to recognize by the failure type Temporal carries for it: the
 * class name (worker/maskSecretsInterceptor.ts). A failure reaches the CLI as a type name, not as an
 * instance, hence the classes themselves here; test/unit/errors.test.ts fails when a class deriving
 * from InputError is missing.
 */
import { ConfigError } from '../config/configError.js';
import type { InputError } from '../domain/errors.js';
import { EndpointError } from '../llm/endpointError.js';
import { DecontaminationSetError } from '../pipeline/decontaminationSetError.js';
import { EvalInputError } from '../pipeline/evaluation/evalContext.js';
import { ConfigMismatchError } from '../pipeline/planning/configMismatchError.js';
import { RichnessError } from '../pipeline/planning/richnessError.js';
import { SourceError } from '../sources/contract.js';
import { ColumnMappingError } from '../sources/readers/hfColumns.js';
import { ImportedScoresError } from '../sources/importedScores.js';
import { OutputLocationError } from '../storage/outputLocationError.js';

export const INPUT_ERRORS: ReadonlyArray<abstract new (...args: never[]) => InputError> = [
  ColumnMappingError,
  ConfigError,
  ConfigMismatchError,
  DecontaminationSetError,
  EndpointError,
  EvalInputError,
  ImportedScoresError,
  OutputLocationError,
  RichnessError,
  SourceError,
];
