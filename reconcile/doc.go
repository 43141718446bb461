// Package reconcile is the one home of statement ↔ ledger reconciliation: the value types and the
// matcher (Match, Flag, Summarise, Run — no I/O, so the reconciliation workflow may use them), and
// the runner that reads a pair's stored statement and the ledger's partner-bank mirror accounts,
// matches them and records the run and its flags (Runner, Store).
//
// The daily workflow's activities and `wagerail reconcile` call the same Runner methods through
// the same loop (Run), so the command line reconciles exactly as the schedule does.
//
// Failures are of two kinds and never mixed up. What reconciliation finds (flags, a period
// without a statement, a pair that is not a valid tenant and partner) is part of the PairSummary.
// Infrastructure that did not answer (the ledger, the gateway, the database) is an error: the
// activity returns it as retryable and Temporal tries again; only when the retries are spent does
// the workflow report the pair as failed.
//
// It only reads the ledger — the bank statement wins, and drift is reported, never corrected —
// and it must not post to the ledger or call a partner except through the gateway.
package reconcile
