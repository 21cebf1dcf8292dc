// A bound LIMIT for every SQLite read. Not a bare `LIMIT ?`: SQLite (3.53, better-sqlite3 12) reads
// a bare parameter's value when it plans, so each new binding expires the statement and every run
// compiles it again (a status read's stream tail 25 µs against 14; in the server's profile the SQL
// parser and planner ran under every list). A cast is an expression it leaves to run time.
export const LIMIT = "LIMIT CAST(? AS INTEGER)";
