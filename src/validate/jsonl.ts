// Streaming JSON Lines: files are read in chunks and split into lines without ever holding more than
// one line, so a huge outputs file costs memory per line, and a line over the limit (a file that is not
// JSON Lines, or one without newlines) is an InputError instead of an out-of-memory crash.
import { createReadStream, statSync } from "node:fs";
import { InputError, parseJsonText } from "../schema/input-error.ts";

export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface JsonLine {
  /** 1-based line number in the file. */
  line: number;
  value: unknown;
  /** `FILE:LINE`, the label errors about this line use. */
  label: string;
}

function checkReadable(path: string): void {
  try {
    const stat = statSync(path);
    if (stat.isDirectory()) throw new InputError(path, undefined, "is a directory, not a file");
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(
      path,
      undefined,
      code === "ENOENT" ? "file not found" : `cannot read: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/** Yields each non-blank line of a JSON Lines file, parsed. Malformed JSON is an InputError naming `FILE:LINE`. */
export async function* readJsonLines(path: string, options: { maxLineBytes?: number } = {}): AsyncGenerator<JsonLine> {
  checkReadable(path);
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const stream = createReadStream(path, { highWaterMark: 1 << 16 });
  let parts: Buffer[] = [];
  let partBytes = 0;
  let line = 0;
  const finish = (endedWithNewline: boolean): JsonLine | undefined => {
    line += 1;
    const text = Buffer.concat(parts, partBytes).toString("utf8").replace(/\r$/, "");
    parts = [];
    partBytes = 0;
    if (text.trim() === "") return undefined;
    const label = `${path}:${line}`;
    try {
      return { line, value: parseJsonText(text, label), label };
    } catch (err) {
      if (err instanceof InputError && !endedWithNewline) {
        throw new InputError(label, undefined, `${err.detail} (the last line has no newline: is the file truncated?)`, {
          cause: err,
        });
      }
      throw err;
    }
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0;
      for (;;) {
        const newline = chunk.indexOf(0x0a, start);
        const end = newline < 0 ? chunk.length : newline;
        if (partBytes + (end - start) > maxLineBytes) {
          throw new InputError(
            `${path}:${line + 1}`,
            undefined,
            `line is longer than ${maxLineBytes} bytes (JSON Lines needs one JSON value per line)`,
          );
        }
        if (end > start) {
          parts.push(chunk.subarray(start, end));
          partBytes += end - start;
        }
        if (newline < 0) break;
        const parsed = finish(true);
        if (parsed) yield parsed;
        start = newline + 1;
      }
    }
    if (partBytes > 0) {
      const parsed = finish(false);
      if (parsed) yield parsed;
    }
  } finally {
    stream.destroy();
  }
}
