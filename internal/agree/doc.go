// Package agree computes inter-rater agreement and human-versus-automatic-judge statistics for
// rubric fields: pairwise percent agreement and Cohen's kappas, Fleiss' kappa, Krippendorff's
// alpha, Gwet's AC1/AC2, ICCs, Pearson/Spearman/Kendall tau-b against an automatic judge,
// majority-label accuracy and kappas, and percentile bootstrap intervals.
//
// The definitions are those of the reference oracle in ../shared/oracle (its README states
// them). Everything here is a pure function over in-memory ratings: no files, no SQL, no
// output formatting. A statistic that cannot be computed (0/0, no data) is a [Value] that is
// not OK and carries the reason; it is never reported as 0, 1 or NaN.
//
// Ratings of one field are an items × raters matrix of category codes ([Matrix]), one byte
// per cell with [Missing] for an absent rating. Every statistic is derived from integer
// tallies collected in one pass over that matrix (the coincidence counts per number of
// ratings, the confusion table of every rater pair, the sums the ICC needs), so memory beyond
// the matrix does not grow with the number of items and most ratios are formed from exact
// integers. [Analyze] is the entry point for callers holding ratings in memory; [Builder]
// turns labelled rows (item, rater, value strings) into its input.
//
// Library use: gonum's stat package supplies Pearson's r (stat.Correlation, also for the
// rank-based Spearman) and the bootstrap standard deviation (stat.StdDev), which are exactly
// the definitions wanted. It has no Cohen, Fleiss, Krippendorff, Gwet or ICC coefficients;
// its Kendall is tau-a in O(n²) without tie correction and its quantiles lack numpy's linear
// rule, so those are written here, each next to the formula it implements.
package agree
