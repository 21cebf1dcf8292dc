// The event feed as the audit compares it (src/audit sits below the webhooks: its callers hand
// this in): its three read models, kept where a service with webhooks folded them, and each
// stream's fresh documents from the feed's own fold.
import type { JoinedReadModels } from "../audit/read-models.js";
import { createEventFeed, FEED, FEED_SHAPES, foldBatch } from "./feed.js";

const byKey = (docs: Array<{ key: string; doc: unknown }>) => new Map(docs.map(({ key, doc }) => [key, doc]));

export const feedAudit: JoinedReadModels = {
  names: Object.values(FEED),
  kept: async (readModels) => (await readModels.checkpoint(FEED.events)) > 0,
  tables: [{ name: FEED.events, table: FEED_SHAPES[FEED.events].table }],
  foldStream(events) {
    const { changed, entries, endpoints } = foldBatch(events, new Map());
    return new Map<string, Map<string, unknown>>([
      [FEED.events, byKey(entries)],
      [FEED.streams, new Map(changed)],
      [FEED.endpoints, byKey(endpoints)],
    ]);
  },
  join: (runner, store, readModels) => void createEventFeed({ store, readModels, runner }),
};
