/**
 * A real Prometheus server (tools/bin/prometheus, Debian's package via tools/install.sh) on
 * 127.0.0.1, scraping the given targets every second, with its data in a temporary folder, and its
 * HTTP API's instant query (https://prometheus.io/docs/prometheus/latest/querying/api/#instant-queries).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, stopProcess } from '../../local/temporalDevServer.js';
import { TOOLS_DIR } from '../../local/tools.js';

export interface PromSample {
  metric: Record<string, string>;
  value: number;
}

export interface Prometheus {
  url: string;
  /** An instant query's vector (a scalar comes as one sample with no labels). */
  query(promql: string): Promise<PromSample[]>;
  stop(): Promise<void>;
}

export async function startPrometheus(targets: string[], job = 'mmif'): Promise<Prometheus> {
  const dir = await mkdtemp(path.join(tmpdir(), 'mmif-prometheus-'));
  const config = path.join(dir, 'prometheus.yml');
  // YAML is a superset of JSON.
  await writeFile(config, JSON.stringify({ global: { scrape_interval: '1s', evaluation_interval: '1s' }, scrape_configs: [{ job_name: job, static_configs: [{ targets }] }] }));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    path.join(TOOLS_DIR, 'bin', 'prometheus'),
    [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`prometheus exited (${code}): ${log}`))));
  const ready = async () => {
    for (;;) {
      const ok = await fetch(`${url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  await Promise.race([ready(), exited]);
  exited.catch(() => {});
  return {
    url,
    async query(promql) {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await response.json()) as { status: string; error?: string; data: { resultType: string; result: unknown } };
      if (body.status !== 'success') throw new Error(`${promql}: ${body.error}`);
      if (body.data.resultType === 'scalar') return [{ metric: {}, value: Number((body.data.result as [number, string])[1]) }];
      return (body.data.result as Array<{ metric: Record<string, string>; value: [number, string] }>).map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async stop() {
      await stopProcess(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
