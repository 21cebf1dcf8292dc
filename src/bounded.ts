// Maps kept bounded in a long-running process (payment states, first events, cards on file, parsed
// read-model documents, a simulator's calls): the entry set last is the newest, and past `max` the oldest leaves.

/** Sets `key` as the newest entry of `map`; drops the oldest while the map holds more than `max`. */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}
