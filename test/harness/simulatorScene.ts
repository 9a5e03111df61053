/**
 * What the stage tests against the HTTP simulator share: a simulator started before the file's tests,
 * a scratch folder (the dataset root and the outputs' parent) and one generated scene JPEG, all closed
 * and removed after them.
 */
import { after, before } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { contextFor } from '../../activities/runtime.js';
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { sceneJpeg } from '../fixtures/images.js';

export interface SimulatorScene {
  readonly sim: SimulatorHandle;
  readonly dir: string;
  /** Filled before the tests run; the object stays the same, so it can be captured at load time. */
  readonly image: { jpeg: Buffer; sha256: string };
  /**
   * A stage context for one sample of a cc3m build on the simulator; `output` defaults to a fresh folder
   * per call, hence a fresh model cache per test.
   */
  context(buildId: string, overrides?: Partial<BuildConfigInput>, output?: string): ReturnType<typeof contextFor>;
}

export function simulatorScene(options: { seed: number; tmpPrefix: string; scene: number }): SimulatorScene {
  let sim: SimulatorHandle | undefined;
  let dir: string | undefined;
  const image: { jpeg: Buffer; sha256: string } = { jpeg: Buffer.alloc(0), sha256: 'scene' };
  before(async () => {
    sim = await startSimulator({ seed: options.seed });
    dir = await mkdtemp(path.join(tmpdir(), options.tmpPrefix));
    image.jpeg = await sceneJpeg(options.scene);
  });
  after(async () => {
    await sim?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const scene: SimulatorScene = {
    get sim() {
      if (!sim) throw new Error('simulatorScene: the simulator is started in before(); use it inside a test');
      return sim;
    },
    get dir() {
      if (!dir) throw new Error('simulatorScene: the folder is made in before(); use it inside a test');
      return dir;
    },
    image,
    context(buildId, overrides = {}, output = path.join(scene.dir, `out-${Math.random()}`)) {
      return contextFor(
        parseBuildConfig({
          buildId,
          output,
          sources: [{ type: 'cc3m', uri: scene.dir }],
          maxSamples: 1,
          models: { default: { model: 'mmif-sim-vlm', baseUrl: scene.sim.url } },
          ...overrides,
        }),
      );
    },
  };
  return scene;
}
