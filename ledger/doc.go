// Package ledger is Wagerail's double-entry ledger, the only source of truth for money: the chart
// of accounts, the posting validator, the Postgres store (schema ledger), the gRPC service and its
// Go client. Balances are derived from append-only entries; corrections are reversals or
// adjustments. It must not call partner banks or know about HTTP.
package ledger
