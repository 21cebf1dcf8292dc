// How many times the tab's live stream came back after it was lost (./live.ts provides it): a page
// whose load failed meanwhile loads again then (./ui.ts useLoad), instead of keeping its error
// until a click. Apart from live.ts, which renders through ui.ts, so that ui.ts can read it.
import { createContext } from "preact";

export const Reconnects = createContext(0);
