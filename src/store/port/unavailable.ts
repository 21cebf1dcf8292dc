import { CardflowError } from "../../errors.js";

/**
 * 503: the store cannot be reached right now (a lost connection, the database restarting, another
 * process holding SQLite's write lock past the bound). Nothing was acknowledged; retry later.
 */
export class StoreUnavailable extends CardflowError {
  override readonly name = "StoreUnavailable";
  readonly status = 503;
  readonly code = "store_unavailable";
  /** Seconds after which a retry is worth it (the HTTP Retry-After). */
  readonly retryAfterSeconds = 1;
  constructor(reason: string, options?: ErrorOptions) {
    super(`the service's database is unavailable (${reason}); retry later`, options);
  }
}
