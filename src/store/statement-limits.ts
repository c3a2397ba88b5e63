/** How many values one statement may carry (a leaf module: the backends and the statement text read it). */

/** Both backends cap the parameters of one statement (SQLite 32,766): multi-row writes stay under it. */
export const MAX_STATEMENT_PARAMETERS = 30_000

/** Rows of `columns` values that one multi-row statement can take. */
export const rowsPerStatement = (columns: number) => Math.max(1, Math.floor(MAX_STATEMENT_PARAMETERS / columns))
