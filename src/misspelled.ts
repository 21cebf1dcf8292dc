// "Did you mean …?": a name given that is likely another one misspelled (an input's field, a
// factory's option).

/**
 * Whether `key` is likely `field` misspelled: two edits at most, one for a name of up to four
 * letters, none for a one-letter name (`id` is not `q` misspelled, nor `to`, nor an empty name).
 */
export function misspelled(key: string, field: string): boolean {
  if (key === "" || field.length < 2) return false;
  return editDistance(key, field) <= (field.length <= 4 ? 1 : 2);
}

/** Edit distance (Levenshtein, with a swap of neighbours as one edit), for "did you mean" on short field names. */
function editDistance(a: string, b: string): number {
  // two neighbouring letters swapped (ulr, tpye) count as one edit, the commonest typo
  let before: number[] = [];
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) next[j] = Math.min(next[j]!, before[j - 2]! + 1);
    }
    before = row;
    row = next;
  }
  return row[b.length]!;
}
