// Package analysiscmd holds the analysis commands of jikken: compare, plot and report. Each is
// thin wiring from flags to the report and stats packages.
package analysiscmd
