// Package workflows holds Wagerail's Temporal workflows: deterministic orchestration only — no
// I/O, clocks, randomness or goroutines outside the SDK's own. Each workflow lives in its own file
// with its input/result types and registered name; activities are called through typed helpers
// with options from options.go. Register (register.go) is the one registration a worker does,
// StartOptions (start.go) the one way a saga is started. Schedules (daily reconciliation, …) are
// declared here too. It imports activities for names and payload types only, never gateway.
//
// Paying many items from one account (a payroll run, a batch of loan remittances) is the fan-out
// block's: start Fanout (fanout.go) as a child workflow with the items (key, payee account,
// amount), the source account and the saga's record activity (an
// activities.Action[activities.BulkRecordInput], idempotent by item reference); it pays them in
// batches of FanoutBatch child workflows, one bulk disbursement each, settles each batch by
// gathered callbacks and one status lookup for all its items, hands the record activity each item
// once its outcome is final, and returns the totals and the items that failed with the bank's
// reason. FanoutItemStatus answers one item's status while it runs.
package workflows
