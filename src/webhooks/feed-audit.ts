// The event feed as the audit compares it (src/audit sits below the webhooks: its callers hand
// this in): its three read models, kept where a service with webhooks folded them, and each
// stream's fresh documents from the feed's own fold.
import type { JoinedReadModels } from "../audit/read-models.js";
import { createEventFeed, FEED, FEED_SHAPES, foldBatch } from "./feed.js";

const names = Object.values(FEED);
const byKey = (docs: Array<{ key: string; doc: unknown }>) => new Map(docs.map(({ key, doc }) => [key, doc]));

export const feedAudit: JoinedReadModels = {
  names,
  // any of the three with a checkpoint or a document (a checkpoint reset by hand does not hide the rest)
  kept: async (readModels) => {
    for (const name of names) if ((await readModels.checkpoint(name)) > 0 || (await readModels.count(name)) > 0) return true;
    return false;
  },
  tables: [{ name: FEED.events, table: FEED_SHAPES[FEED.events].table }],
  foldStream(events, asAllowed) {
    const { changed, entries, endpoints } = foldBatch(events, new Map(), asAllowed);
    return new Map<string, Map<string, unknown>>([
      [FEED.events, byKey(entries)],
      [FEED.streams, new Map(changed)],
      [FEED.endpoints, byKey(endpoints)],
    ]);
  },
  join: (runner, store, readModels) => void createEventFeed({ store, readModels, runner }),
};
