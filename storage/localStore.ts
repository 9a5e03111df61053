/**
 * The ObjectStore on a local directory: the embedded default for builds, caches and datasets on
 * disk, with the same contract as S3 (atomic puts, create-if-absent, listing by prefix) so the pipeline
 * never knows which one it writes to.
 */
import {
  appendFileSync,
  close as closeCallback,
  constants,
  createReadStream,
  type Dirent,
  open as openCallback,
  read as readCallback,
  readFile as readFileCallback,
  writeFile as writeFileCallback,
} from 'node:fs';
import { mkdir, readdir, realpath, rename, rm, stat, link, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { listingSkips, NOT_A_FILE, StoreError, type ObjectInfo, type ObjectStore } from './objectStore.js';

// Whole-file reads and writes, and ranged reads, through the callback API: fs/promises wraps every
// open in a FileHandle (an object with a close-on-GC finalizer): docs/adr/0011-small-writes-per-model-call.md,
// docs/adr/0053-parquet-planning-cpu.md.
const readWhole = promisify(readFileCallback);
const writeWhole = promisify(writeFileCallback);
const openFd = promisify(openCallback);
const readFd = promisify(readCallback);
const closeFd = promisify(closeCallback);
/** Folders remembered as inside the root at most (LocalStore.confinedDirs; a build has one folder per sample). */
const CONFINED_DIRS_KEPT = 4096;
/** Opens a file but not a link (ELOOP): a get in a folder known to be inside the root needs no realpath. */
const READ_NO_LINK = constants.O_NOFOLLOW === undefined ? undefined : constants.O_RDONLY | constants.O_NOFOLLOW;

/**
 * A local directory as an object store: the embedded default. `put` writes a temp file and renames
 * it; `create` writes the file in place.
 * Symbolic links are followed where they stay inside the root (Hugging Face cache layouts link
 * `00000/000000000.jpg` to `../../blobs/<sha>`); one that resolves outside it is listed like any file
 * but refused on read with StoreError 'escapes-root', so a dataset cannot make a reader open
 * /etc/passwd and the record naming it is rejected with the reason. A root inside a Hugging Face
 * cache snapshot (`<repo>/snapshots/<revision>/...`) may link into that repository's `blobs/`.
 */
/** A name ending in an extension of 2-5 letters and digits, at least one a letter (`x.jpg`, `a.json`; not `v1.0`). */
const FILE_LIKE_NAME = /^[^.].*\.(?=[0-9]*[A-Za-z])[A-Za-z0-9]{2,5}$/;
/** Marks a put's temp file (`<key>.tmp-<pid>-<hex>`): never listed as an object, swept when left behind. */
const TEMP_MARK = '.tmp-';

export class LocalStore implements ObjectStore {
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /** The real path links may lead inside (see linkRoot). */
  private linkBoundary?: Promise<string>;
  /**
   * Folders whose real path was found inside the boundary: a file in one, opened without following
   * a link, is inside too, so `get` skips the realpath of every read (a walk of the whole path, the
   * largest cost of a small read). Trusted for the store's life: a dataset's links are fixed while it
   * is read. Forgotten all at once every CONFINED_DIRS_KEPT folders, so memory stays bounded.
   */
  private readonly confinedDirs = new Set<string>();

  /**
   * `full` (a resolved key) when its real path stays inside the root; throws 'escapes-root' otherwise,
   * ENOENT when absent.
   */
  private async confined(key: string, full: string): Promise<string> {
    const real = await realpath(full);
    if (!this.inside(real, await this.boundary())) {
      throw new StoreError(`'${key}' in ${this.root} is a symbolic link to ${real}, outside the dataset root; not read`, key, 'escapes-root');
    }
    return full;
  }

  private boundary(): Promise<string> {
    // Cached once the root exists: an output root is made after the store is, and must not be pinned unresolved.
    this.linkBoundary ??= realpath(this.root).then(linkRoot);
    return this.linkBoundary.catch(() => {
      this.linkBoundary = undefined;
      return this.root;
    });
  }

  private inside(real: string, root: string): boolean {
    return real === root || real.startsWith(root + path.sep);
  }

  /** Whether folder `dir` really is inside the boundary (remembered once it is), or absent. */
  private async dirState(dir: string): Promise<'confined' | 'absent' | 'unknown'> {
    if (this.confinedDirs.has(dir)) return 'confined';
    let real: string;
    try {
      real = await realpath(dir);
    } catch (err) {
      if (isNotFound(err) || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return 'absent';
      throw err;
    }
    if (!this.inside(real, await this.boundary())) return 'unknown';
    if (this.confinedDirs.size >= CONFINED_DIRS_KEPT) this.confinedDirs.clear();
    this.confinedDirs.add(dir);
    return 'confined';
  }

  private resolve(key: string): string {
    const full = path.resolve(this.root, key);
    if (full !== this.root && !full.startsWith(this.root + path.sep)) {
      throw new StoreError(`key '${key}' escapes the store root ${this.root}`, key, 'escapes-root');
    }
    return full;
  }

  async get(key: string): Promise<Buffer | undefined> {
    // Node takes numeric flags (its types say string).
    return this.reach(key, (file, flag) => readWhole(file, { flag: flag as unknown as string }));
  }

  async getRange(key: string, start: number, end: number): Promise<Buffer> {
    const fd = await this.openExisting(key);
    try {
      const buf = Buffer.alloc(end - start);
      const { bytesRead } = await readFd(fd, buf, 0, buf.length, start);
      return buf.subarray(0, bytesRead);
    } finally {
      await closeFd(fd);
    }
  }

  async openRead(key: string): Promise<NodeJS.ReadableStream> {
    await closeFd(await this.openExisting(key));
    return createReadStream(this.resolve(key));
  }

  /** A descriptor of `key`, opened as get() reads; StoreError 'not-found' when absent. */
  private async openExisting(key: string): Promise<number> {
    const fd = await this.reach(key, openFd);
    if (fd === undefined) throw new StoreError(`no object '${key}' in ${this.root}`, key, 'not-found');
    return fd;
  }

  /**
   * `open` applied to `key`'s file as every read reaches it: in a folder known to be inside the root,
   * without following a link (no realpath); a link, or a file elsewhere, once `confined` found it
   * inside. Undefined when the file or its folder is absent.
   */
  private async reach<T>(key: string, open: (file: string, flag: number | string) => Promise<T>): Promise<T | undefined> {
    const full = this.resolve(key);
    try {
      const dir = READ_NO_LINK === undefined ? 'unknown' : await this.dirState(path.dirname(full));
      if (dir === 'absent') return undefined;
      if (dir === 'confined' && READ_NO_LINK !== undefined) {
        try {
          return await open(full, READ_NO_LINK);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ELOOP') throw err;
          // The file is a link: where it leads is checked below.
        }
      }
      return await open(await this.confined(key, full), 'r');
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async put(key: string, body: Buffer | string): Promise<void> {
    const tmp = await this.writeTemp(key, body);
    await rename(tmp, this.resolve(key)).catch(async (err: unknown) => {
      await unlink(tmp).catch(() => {});
      throw err;
    });
  }

  /**
   * Exclusive create + one write, cheaper than put's temp file + rename
   * (docs/adr/0011-small-writes-per-model-call.md).
   */
  async create(key: string, body: Buffer | string): Promise<void> {
    const full = this.resolve(key);
    try {
      await this.inDir(path.dirname(full), () => writeWhole(full, body, { flag: 'wx' }));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      await this.put(key, body); // a retry's, or one left torn: replaced whole
    }
  }

  async putIfAbsent(key: string, body: Buffer | string): Promise<boolean> {
    const tmp = await this.writeTemp(key, body);
    try {
      await link(tmp, this.resolve(key)); // link() fails with EEXIST atomically: no check-then-write race
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    } finally {
      await unlink(tmp);
    }
  }

  /**
   * The body in a temp file beside the key, for a rename or link into place. A write that fails (a
   * full disk: ENOSPC) removes what it wrote, so no part of a temp file stays in the dataset.
   */
  private async writeTemp(key: string, body: Buffer | string): Promise<string> {
    const full = this.resolve(key);
    const tmp = `${full}${TEMP_MARK}${process.pid}-${randomBytes(6).toString('hex')}`;
    try {
      await this.inDir(path.dirname(full), () => writeWhole(tmp, body));
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
    return tmp;
  }

  async sweepIncompleteWrites(prefix: string): Promise<string[]> {
    const removed: string[] = [];
    const sweep = async (dirKey: string): Promise<void> => {
      for (const entry of await this.entries(dirKey)) {
        const key = dirKey ? `${dirKey}/${entry.name}` : entry.name;
        if (entry.isDirectory()) await sweep(key);
        else if (entry.name.includes(TEMP_MARK) && key.startsWith(prefix)) {
          await rm(this.resolve(key), { force: true });
          removed.push(key);
        }
      }
    };
    await sweep(prefix.replace(/\/+$/, ''));
    return removed;
  }

  /**
   * One write() with O_APPEND: lines of concurrent writers never interleave within a line. Done
   * synchronously, on this thread: a request's sent mark is appended inside its limiter slot
   * (llm/sentLog.ts), and through the thread pool its open, write and close each waited behind
   * image and cache I/O and cost a turn of a busy event loop; appending a line to the page cache
   * takes microseconds, and it is in the file (surviving a crash of this process) on return.
   */
  async appendLine(key: string, line: string): Promise<void> {
    const full = this.resolve(key);
    await this.inDir(path.dirname(full), async () => appendFileSync(full, `${line}\n`));
  }

  async readLines(key: string): Promise<string[]> {
    const body = await this.get(key);
    if (!body) return [];
    const lines = body.toString('utf8').split('\n');
    lines.pop(); // '' after the last newline, or a line cut by a crash mid-write
    return lines;
  }

  /**
   * Runs a write into `dir`, making the folder only when the write finds it missing: most writes go
   * into a folder that exists, and pay no mkdir (and no memory of the folders made) for it.
   */
  private async inDir(dir: string, write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await makeDirs(dir);
      await write();
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      return (await stat(this.resolve(key))).isFile();
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    // Walk only the deepest directory the prefix names, then filter by the remaining key prefix.
    const dirKey = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    yield* this.walk(dirKey, prefix);
  }

  /** A folder's entries; none where the folder is missing or is a file. */
  private async entries(dirKey: string): Promise<Dirent[]> {
    try {
      return await readdir(this.resolve(dirKey), { withFileTypes: true });
    } catch (err) {
      if (isNotFound(err) || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
      throw err;
    }
  }

  private async *walk(dirKey: string, prefix: string): AsyncIterable<ObjectInfo> {
    const entries = await this.entries(dirKey);
    // Order by full key, as S3 does: a directory's keys all start with `name/`, so 'a.txt' < 'a/x' < 'a0'.
    const sortKey = (e: (typeof entries)[number]) => (e.isDirectory() ? `${e.name}/` : e.name);
    entries.sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
    for (const entry of entries) {
      const key = dirKey ? `${dirKey}/${entry.name}` : entry.name;
      if (entry.name.includes(TEMP_MARK)) continue; // an in-flight write, not an object
      if (listingSkips(prefix, key)) continue; // the extraction cache: not read unless asked for
      if (entry.isDirectory()) {
        // A folder named like a file (`x.jpg`) is where a reader expects one: listed, so it can say so.
        if (FILE_LIKE_NAME.test(entry.name) && key.startsWith(prefix)) yield { key, size: 0, unreadable: NOT_A_FILE };
        if (key.startsWith(prefix) || prefix.startsWith(key + '/')) yield* this.walk(key, prefix);
      } else if (entry.isFile() && key.startsWith(prefix)) {
        yield await fileInfo(key, this.resolve(key));
      } else if (entry.isSymbolicLink() && key.startsWith(prefix)) {
        // A linked file is listed (reads check where it leads); a dangling link or a linked
        // directory is not an object: directories are walked only where they really are, so no cycle.
        const target = await stat(this.resolve(key)).catch(() => undefined);
        if (target?.isFile()) yield { key, size: target.size };
      }
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.resolve(key), { force: true });
  }
}

/** A listed file's size, or why it cannot be read (its name, or the OS refused to stat it) rather than failing the listing. */
async function fileInfo(key: string, file: string): Promise<ObjectInfo> {
  try {
    return { key, size: (await stat(file)).size };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    // Node decodes a name that is not UTF-8 with U+FFFD, a name no open() or stat() finds again.
    const why = key.includes('\uFFFD') ? `its name is not valid UTF-8 (listed as '${key}'); rename the file to read it` : `the OS cannot stat it (${code})`;
    return { key, size: 0, unreadable: why };
  }
}

/**
 * Where the links of a store rooted at `realRoot` may lead: the root, or for a root inside a Hugging
 * Face cache snapshot the repository's cache folder, whose `blobs/` the snapshot files link to.
 */
function linkRoot(realRoot: string): string {
  const parts = realRoot.split(path.sep);
  const at = parts.lastIndexOf('snapshots');
  return at > 0 && at < parts.length - 1 ? parts.slice(0, at).join(path.sep) : realRoot;
}

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException)?.code === 'ENOENT';
}

/**
 * `mkdir -p` one level at a time. Node's `mkdir(dir, { recursive: true })` never returns for a path
 * under /proc (it retries ENOENT forever, spinning a core); here each level is made once, so such
 * a path fails with ENOENT at once.
 */
async function makeDirs(dir: string): Promise<void> {
  try {
    await mkdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    const parent = path.dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw err;
    await makeDirs(parent);
    await mkdir(dir).catch((again: NodeJS.ErrnoException) => {
      if (again.code !== 'EEXIST') throw again;
    });
  }
}
