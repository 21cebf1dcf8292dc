/** A store asked to exist (by a command that only reads) that does not: nothing was created. */
export class StoreMissing extends Error {
  override readonly name = "StoreMissing";
}
