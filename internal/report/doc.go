// Package report renders agreement results (agree.FieldResult) as a terminal table, JSON with
// the key names of the reference oracle, Markdown for papers and READMEs, and CSV for
// spreadsheets. It computes nothing itself.
package report
