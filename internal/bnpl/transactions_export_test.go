package bnpl

// TransactionsSQL is transactionsSQL, for the plan test.
var TransactionsSQL = transactionsSQL
