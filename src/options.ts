// Options objects of the library's factories. An option that is present but undefined is almost
// always a mistake (`createEngine({ processors: sims.processors })`, a property that does not
// exist): falling back to the default would hide it, so it is refused, naming the option.

/** Throws when an option is given with the value undefined; `hints` add a word on likely mix-ups. */
export function refuseUndefinedOptions(factory: string, options: object | undefined, hints: Record<string, string> = {}): void {
  if (options === undefined) return;
  for (const [name, value] of Object.entries(options)) {
    if (value !== undefined) continue;
    const hint = hints[name] ? ` (${hints[name]})` : "";
    throw new TypeError(`${factory}: option ${name} is undefined; omit it to use the default, or pass a value${hint}`);
  }
}
