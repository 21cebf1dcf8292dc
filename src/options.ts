// Options objects of the library's factories. An option that is present but undefined is almost
// always a mistake (`createEngine({ processors: sims.processors })`, a property that does not
// exist): falling back to the default would hide it, so it is refused, naming the option. So is an
// option misspelled (`createEngine({ stroe })` would run on the default store). Other names are
// let through: a caller may spread an object that holds more (`openStores()`'s `description`).
import { misspelled } from "./misspelled.js";

/**
 * Throws when an option is given with the value undefined, or is one of `known` misspelled, or is a
 * name `hints` words as a likely mix-up; `hints` add a word on likely mix-ups of known names too.
 */
export function checkOptions(factory: string, options: object | undefined, known: readonly string[], hints: Record<string, string> = {}): void {
  if (options === undefined) return;
  for (const [name, value] of Object.entries(options)) {
    if (!known.includes(name)) {
      if (hints[name]) throw new TypeError(`${factory}: no option ${name} (${hints[name]}); its options: ${known.join(", ")}`);
      const meant = known.find((option) => misspelled(name, option));
      if (meant) throw new TypeError(`${factory}: no option ${name} (did you mean ${meant}?); its options: ${known.join(", ")}`);
      continue;
    }
    if (value !== undefined) continue;
    const hint = hints[name] ? ` (${hints[name]})` : "";
    throw new TypeError(`${factory}: option ${name} is undefined; omit it to use the default, or pass a value${hint}`);
  }
}
