/**
 * Headless Chromium (the Debian package, installed by `tools/install.sh test`) driven over the
 * DevTools protocol through `--remote-debugging-pipe`: JSON messages separated by NUL bytes on file
 * descriptors 3 (to the browser) and 4 (from it), so no WebSocket client and no npm package is needed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';

export const CHROMIUM = process.env.MMIF_CHROMIUM ?? '/usr/bin/chromium';

interface Reply {
  id?: number;
  result?: Record<string, unknown>;
  error?: { message: string };
  method?: string;
  sessionId?: string;
}

export class HeadlessChromium {
  private nextId = 1;
  private pending = new Map<number, { resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  private buffered = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly profile: string,
  ) {
    const output = child.stdio[4] as Readable;
    output.setEncoding('utf8');
    output.on('data', (chunk: string) => {
      this.buffered += chunk;
      let end: number;
      while ((end = this.buffered.indexOf('\0')) >= 0) {
        const message = JSON.parse(this.buffered.slice(0, end)) as Reply;
        this.buffered = this.buffered.slice(end + 1);
        const waiting = message.id === undefined ? undefined : this.pending.get(message.id);
        if (!waiting) continue;
        this.pending.delete(message.id!);
        if (message.error) waiting.reject(new Error(message.error.message));
        else waiting.resolve(message.result ?? {});
      }
    });
  }

  static async launch(): Promise<HeadlessChromium> {
    const profile = await mkdtemp(path.join(tmpdir(), 'mmif-chromium-'));
    const child = spawn(
      CHROMIUM,
      // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
      ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--remote-debugging-pipe', `--user-data-dir=${profile}`, 'about:blank'],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    const browser = new HeadlessChromium(child, profile);
    await Promise.race([browser.send('Browser.getVersion'), new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`chromium exited (${code}): ${stderr}`))))]);
    return browser;
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const input = this.child.stdio[3] as Writable;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      input.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });
  }

  /** Opens `url` in a new tab of the given size and waits for its load event (images included). */
  async open(url: string, size = { width: 1280, height: 900 }): Promise<Tab> {
    const { targetId } = (await this.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
    const { sessionId } = (await this.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
    const tab = new Tab(this, sessionId);
    await this.send('Emulation.setDeviceMetricsOverride', { ...size, deviceScaleFactor: 1, mobile: false }, sessionId);
    await this.send('Page.navigate', { url }, sessionId);
    await tab.waitFor('document.readyState === "complete"');
    return tab;
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
    await rm(this.profile, { recursive: true, force: true });
  }
}

export class Tab {
  constructor(
    private readonly browser: HeadlessChromium,
    private readonly sessionId: string,
  ) {}

  /** Evaluates a JavaScript expression in the page; resolves with its value (promises awaited). */
  async evaluate<T>(expression: string): Promise<T> {
    const reply = (await this.browser.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, this.sessionId)) as {
      result: { value?: T };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (reply.exceptionDetails) throw new Error(`in the page: ${reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text}`);
    return reply.result.value as T;
  }

  async waitFor(expression: string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await this.evaluate<boolean>(`Boolean(${expression})`))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${expression}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Sets a <select> as a user would: its value, then the change event the page listens to. */
  async select(id: string, value: string): Promise<void> {
    await this.evaluate(`(() => { const s = document.getElementById(${JSON.stringify(id)}); s.value = ${JSON.stringify(value)}; s.dispatchEvent(new Event('change')); })()`);
  }

  async screenshot(file: string): Promise<void> {
    const { data } = (await this.browser.send('Page.captureScreenshot', { format: 'png' }, this.sessionId)) as { data: string };
    await writeFile(file, Buffer.from(data, 'base64'));
  }
}
