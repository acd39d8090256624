package scoring

// Replicates is the count of bootstrap replicates drawn (replicates), for the tests of
// package scoring_test only: a test build's export, so that the package's API has no test hook.
var Replicates = &replicates
