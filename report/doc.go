// Package report turns a results table into what people read: a statistical comparison of groups
// (as text, markdown, CSV or JSON), plots, and a self-contained HTML report of a run.
package report
