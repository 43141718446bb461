// Package workflows holds Wagerail's Temporal workflows: deterministic orchestration only — no
// I/O, clocks, randomness or goroutines outside the SDK's own. Each workflow lives in its own file
// with its input/result types and registered name; activities are called through typed helpers
// with options from options.go. Schedules (daily reconciliation, …) are declared here too.
package workflows
