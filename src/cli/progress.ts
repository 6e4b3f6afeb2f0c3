/**
 * Progress reporter for long runs.
 *
 * - stderr is a TTY (and enabled): one line `label [####----] done/total elapsed rate`, redrawn in
 *   place at most every `intervalMs` (100 ms), cleared by finish().
 * - not a TTY, or disabled: silent; with `verbose`, one line per 10% of total instead
 *   (written as plain lines, so logs and CI output stay readable).
 *
 * Use log() for messages while a bar is shown, so they do not interleave with the bar.
 */

/** The part of a stream the reporter uses (process.stderr satisfies it). */
export interface ProgressStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressOptions {
  label: string;
  /** Expected number of units; 0 or less means unknown (no bar, no percentages). */
  total: number;
  /** Default process.stderr. */
  stream?: ProgressStream;
  /** Default true. When false no bar is drawn, even on a TTY (verbose lines still print). */
  enabled?: boolean;
  /** Off a TTY, print a line at each 10% step. */
  verbose?: boolean;
  /** Minimum time between redraws, ms. Default 100. */
  intervalMs?: number;
  /** Clock in ms (tests). Default performance.now. */
  now?: () => number;
  /** Unit name for the rate, e.g. "cases" -> "12.3 cases/s". Default "/s" alone. */
  unit?: string;
}

export interface Progress {
  /** Adds n (default 1) completed units. */
  tick(n?: number): void;
  /** Sets the completed count. */
  update(done: number): void;
  /** Changes the total (e.g. once it becomes known). */
  setTotal(total: number): void;
  /** Prints a message without garbling the bar. */
  log(message: string): void;
  /** Clears the bar (TTY) or prints the final verbose line; idempotent. */
  finish(): void;
  readonly done: number;
}

const CLEAR_LINE = "\r\x1b[2K";

/** Bars on screen now: an interrupt clears them (src/cli/signals.ts), so no half-drawn line is left behind. */
const shownBars = new Set<Progress>();

/** Clears every bar currently drawn (what an interrupted command does before its last line). */
export function clearProgressBars(): void {
  for (const bar of [...shownBars]) bar.finish();
}

export function formatDuration(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const total = Math.floor(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  const mm = String(m).padStart(2, "0");
  const ss = String(sec).padStart(2, "0");
  return h > 0 ? `${h}h${mm}m${ss}s` : `${m}m${ss}s`;
}

export function formatRate(done: number, ms: number, unit?: string): string {
  const suffix = unit ? ` ${unit}/s` : "/s";
  if (ms <= 0 || done <= 0) return `0${suffix}`;
  const r = (done * 1000) / ms;
  const text = r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r.toFixed(2);
  return `${text}${suffix}`;
}

export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? (() => performance.now());
  const intervalMs = options.intervalMs ?? 100;
  const enabled = options.enabled ?? true;
  const tty = stream.isTTY === true;
  const drawBar = enabled && tty;
  const verboseLines = !drawBar && options.verbose === true;

  const start = now();
  let total = options.total;
  let done = 0;
  let lastDraw = -Infinity;
  let shown = false; // a bar is currently on the line
  let lastDecile = 0;
  let finished = false;

  function barLine(): string {
    const elapsed = now() - start;
    const counts = total > 0 ? `${done}/${total}` : `${done}`;
    const tail = `${counts} ${formatDuration(elapsed)} ${formatRate(done, elapsed, options.unit)}`;
    const columns = stream.columns ?? 80;
    let line = `${options.label} ${tail}`;
    if (total > 0) {
      const room = columns - options.label.length - tail.length - 5;
      const width = Math.min(30, room);
      if (width >= 5) {
        const filled = Math.min(width, Math.floor((done / total) * width));
        line = `${options.label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${tail}`;
      }
    }
    return line.length >= columns ? line.slice(0, Math.max(0, columns - 1)) : line;
  }

  function draw(force: boolean): void {
    if (!drawBar || finished) return;
    const t = now();
    if (!force && t - lastDraw < intervalMs) return;
    lastDraw = t;
    stream.write(CLEAR_LINE + barLine());
    shown = true;
  }

  function verboseLine(): void {
    if (!verboseLines || total <= 0) return;
    const decile = Math.min(10, Math.floor((done * 10) / total));
    if (decile > lastDecile) {
      lastDecile = decile;
      const elapsed = now() - start;
      stream.write(
        `${options.label}: ${decile * 10}% (${done}/${total}) ` +
          `${formatDuration(elapsed)} ${formatRate(done, elapsed, options.unit)}\n`,
      );
    }
  }

  function changed(): void {
    draw(false);
    verboseLine();
  }

  const progress: Progress = {
    tick(n = 1) {
      done += n;
      changed();
    },
    update(value: number) {
      done = value;
      changed();
    },
    setTotal(value: number) {
      total = value;
      changed();
    },
    log(message: string) {
      if (shown) stream.write(CLEAR_LINE);
      stream.write(message.endsWith("\n") ? message : message + "\n");
      shown = false;
      draw(true);
    },
    finish() {
      if (finished) return;
      verboseLine();
      finished = true;
      if (shown) stream.write(CLEAR_LINE);
      shown = false;
      shownBars.delete(progress);
    },
    get done() {
      return done;
    },
  };
  if (drawBar) shownBars.add(progress);
  draw(true);
  return progress;
}
