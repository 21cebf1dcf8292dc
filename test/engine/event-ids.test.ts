import { describe, expect, it } from "vitest";
import { randomIds, uuidV7 } from "../../src/ids.js";

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millis = (uuid: string) => parseInt(uuid.replaceAll("-", "").slice(0, 12), 16);

describe("event ids (UUID version 7)", () => {
  it("are version-7 UUIDs carrying their millisecond, increasing within one process", () => {
    const ids = Array.from({ length: 20_000 }, randomIds().uuid);
    expect(ids.every((id) => V7.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
    expect(Math.abs(millis(ids[0]!) - Date.now())).toBeLessThan(60_000);
  });

  it("count up within a millisecond and borrow the next one past 4,096, still increasing when the clock steps back", () => {
    let clock = Date.UTC(2025, 0, 1);
    const next = uuidV7(() => clock);
    const ids = Array.from({ length: 4_097 }, next);
    expect(ids.slice(0, 2).map((id) => id.slice(0, 18))).toEqual(["01941f29-7c00-7000", "01941f29-7c00-7001"]);
    expect(ids[4_095]!.slice(0, 18)).toBe("01941f29-7c00-7fff");
    expect(ids[4_096]!.slice(0, 18)).toBe("01941f29-7c01-7000");
    clock -= 5;
    const later = next();
    expect(later > ids[4_096]!).toBe(true);
    expect(millis(later)).toBe(Date.UTC(2025, 0, 1) + 1);
  });
});
