// Package parquetout writes a run's results table as a Parquet file, typed, for pandas, polars,
// DuckDB and Arrow; it is apart from package results so that only the command that writes the
// file links the Parquet library.
package parquetout
