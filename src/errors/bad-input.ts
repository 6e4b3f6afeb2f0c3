// BadInputError: the one base class of every error that means "what the user gave us is wrong" (exit 2):
// a flag, a file, a place in a JSON document, an output path, or what the machine lacks (a missing GPU
// provider, a full disk). It carries where (file, JSON path, flag) and what (one line), so every command
// reports it the same way (src/errors/exit.ts): `specconf COMMAND: FILE: /json/path: what is wrong`.
// Anything else that escapes a command is a bug in specconf: exit 1 with its stack trace. (No imports:
// bin/specconf.js loads this before anything heavy, to handle an interrupt from the first moment.)

export interface InputPlace {
  /** The file as the user named it (or a label such as FILE:LINE). */
  file?: string;
  /** JSON pointer of the offending value inside the file or case ("" = the document). */
  jsonPath?: string;
  /** The flag concerned, spelled as on the command line ("--steps"). */
  flag?: string;
}

export class BadInputError extends Error {
  file: string | undefined;
  jsonPath: string | undefined;
  flag: string | undefined;
  /** What is wrong, without the file and path prefix. */
  detail: string;

  constructor(detail: string, place: InputPlace = {}, options: { cause?: unknown } = {}) {
    super("", options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "BadInputError";
    this.detail = detail.replace(/\s*\n\s*/g, " ");
    this.file = place.file;
    this.jsonPath = place.jsonPath;
    this.flag = place.flag;
    this.message = this.compose();
  }

  /** Names the file the error is about when the thrower could not know it (a case checked after loading). */
  inFile(file: string): this {
    if (this.file === undefined) {
      this.file = file;
      this.message = this.compose();
    }
    return this;
  }

  /** Moves the JSON path under `prefix` (a case inside a failure record or a golden file: "/case"). */
  under(prefix: string): this {
    if (this.jsonPath !== undefined) {
      this.jsonPath = `${prefix}${this.jsonPath}`;
      this.message = this.compose();
    }
    return this;
  }

  protected compose(): string {
    const parts: string[] = [];
    if (this.file !== undefined) parts.push(this.file);
    if (this.jsonPath !== undefined) parts.push(this.jsonPath === "" ? "/" : this.jsonPath);
    parts.push(this.detail);
    return parts.join(": ");
  }
}

/** An output path that cannot be written (a directory, a missing parent, read-only, a full disk). */
export class OutputPathError extends BadInputError {
  constructor(flag: string, file: string, detail: string, options: { cause?: unknown } = {}) {
    super(detail, { flag, file }, options);
    this.name = "OutputPathError";
  }

  protected override compose(): string {
    return `${this.flag} ${this.file}: ${this.detail}`;
  }
}
