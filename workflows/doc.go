// Package workflows holds Wagerail's Temporal workflows: deterministic orchestration only — no
// I/O, clocks, randomness or goroutines outside the SDK's own. Each workflow lives in its own file
// with its input/result types and registered name; activities are called through typed helpers
// with options from options.go. Register (register.go) is the one registration a worker does,
// StartOptions (start.go) the one way a saga is started. Schedules (daily reconciliation, …) are
// declared here too. It imports activities for names and payload types only, never gateway.
package workflows
