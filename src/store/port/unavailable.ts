import { CardflowError } from "../../errors.js";

/**
 * The store cannot be reached right now (a lost connection, the database restarting, another
 * process holding SQLite's write lock past the bound). Nothing was acknowledged; retry later (the
 * HTTP API answers 503 with Retry-After: src/http/status.ts).
 */
export class StoreUnavailable extends CardflowError {
  override readonly name = "StoreUnavailable";
  readonly code = "store_unavailable";
  constructor(reason: string, options?: ErrorOptions) {
    super(`the service's database is unavailable (${reason}); retry later`, options);
  }
}
