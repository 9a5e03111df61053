import { parseBuildConfig } from '../../config/buildConfig.js';

/** The `llm` section of a build config with every default, for tests that drive a ModelCaller directly. */
export function defaultLlmSettings() {
  return parseBuildConfig({
    buildId: 'b',
    output: '/tmp/x',
    sources: [{ type: 'cc3m', uri: '/x' }],
    maxSamples: 1,
    models: { default: { model: 'm' } },
  }).llm;
}
