// Package render writes what the commands print, in every text format they offer: aligned
// tables for a terminal, Markdown for papers and READMEs, CSV for spreadsheets, LaTeX and
// JSON. One Format type names the formats; each format has one escaper (EscapeMarkdown,
// EscapeLaTeX, Neutralize for CSV, textsafe.Line for the terminal), so text from data
// (names, comments, model answers) is made safe the same way whichever command shows it.
//
// It also renders the agreement results of m3eval agree and score (agree.FieldResult) as a
// table, JSON with the key names of the reference oracle, Markdown, CSV and LaTeX. It computes
// nothing itself; the HTML report is package report.
package render
