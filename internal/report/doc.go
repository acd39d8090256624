// Package report builds the report researchers look at (m3eval report): one
// self-contained HTML file with inline SVG charts, the numbers of every chart in a table
// beside it, and the same numbers as JSON.
//
// The report is data first. Each section is a small function from plain data (agreement
// results, the campaign's activity, IllusionBench recall…) to a [Section] of [Chart]s, and
// each chart carries its [Table]; the HTML and the JSON are two renderings of that one
// [Report], so the numbers a reader sees under a chart are the numbers --format json gives.
// A section whose data is absent is kept as a title and one line saying why.
//
// Charts are drawn with gonum.org/v1/plot (axes, ticks, titles, legends, SVG output).
// The glyphs it has no plotter for (interval dots, annotated heatmap cells, stacked
// horizontal bars, area-scaled bubbles) are small plotters written here against its
// plot.Plotter interface. Nothing is fetched when the file is opened: no CDN, no web font,
// one small inline script that sorts tables.
//
// Request holds m3eval report's flags: it checks them, runs the report and writes it as the
// page, its JSON or (through headless Chromium) a PDF.
package report
