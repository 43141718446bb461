package bnpl

// RepaymentsSQL is repaymentsSQL, for the plan test.
var RepaymentsSQL = repaymentsSQL
