// Package ledger is Wagerail's double-entry ledger, the only source of truth for money: the chart
// of accounts, the posting validator, the Postgres store (schema ledger), the gRPC service and its
// Go client. It must not call partner banks or know about HTTP.
//
// # Model
//
// Accounts (asset, liability, income, expense, equity, each with its normal side) are named by
// the chart (chart.go); there is no cash account: money at partner banks is mirrored per bank
// account as partner-bank:<partner>:<account>. Transactions carry a tenant, an idempotency key
// unique per tenant, a status (PENDING -> POSTED | VOIDED, POSTED -> REVERSED), metadata and the
// lineage of the saga step that made them. Entries are append-only. A two-phase posting writes
// HOLD entries; its commit appends the POSTED entries and RELEASE entries that cancel the holds,
// its void appends only the releases. Nothing is ever updated, so:
//
//   - balances are derived from entries (posted, open holds, available), never stored in a
//     mutable column;
//   - per account, entry sequence numbers follow commit order (the entries trigger takes a
//     per-account lock before it draws the number), so the sums of an account's entries up to a
//     sequence number never change. Those sums are stored as immutable checkpoints, written by a
//     balance read when more than CheckpointEvery entries follow the newest one; a read is the
//     newest checkpoint plus the few entries after it, from a covering index. VerifyCheckpoints
//     (gRPC) and `wagerail ledger verify-checkpoints TENANT...` recompute them all.
//
// The database keeps the invariants itself (schema/migrations/ledger): entries and checkpoints
// refuse UPDATE/DELETE/TRUNCATE (triggers, and no privilege for the runtime role), every
// statement that inserts entries must leave its transactions balanced per phase and on a
// transaction of the entries' own tenant and currency, a transaction is inserted together with
// its entries (one statement) and they must match its status, as again at commit after a status
// change (deferred constraint trigger), a composite foreign key refuses accounts of
// another tenant or currency, status moves only forward, a transaction is reversed at most once,
// reversals and adjustments have their required shape, column values stay in their domains
// (positive amounts, known kinds, statuses, phases and directions, currency codes), and
// row-level security is forced on every table. Migration 0003 explains why the statement check
// reads each transaction through a grouped LATERAL subquery instead of a join (stale
// statistics), 0004 why the value rules of transactions and entries are domains rather than
// table CHECK constraints (cost per statement).
//
// # Writing
//
// Postings are validated as a whole (ValidatePosting) before anything is read. PostBatch writes
// any number of postings of a tenant in one round trip (the tenant and one statement that inserts
// transactions and entries, pipelined as one implicit transaction; accounts come from a cache),
// each with its own result. The service routes concurrent single postings of a tenant through a coalescer that
// shares one database transaction among the postings waiting at that moment, so a hot account or
// a fsync is paid once per batch, not once per posting; each caller still gets its answer only
// after its batch committed. At most two batches per tenant are written at once, the second
// only when enough postings wait for it, both to start and to go on (coalesce.go has the
// figures).
//
// # Errors
//
// Every error a caller can act on is an *Error with a stable Reason; the gRPC status carries the
// matching code and a google.rpc.ErrorInfo, and the Client maps statuses back, so
// errors.Is(err, ledger.ErrIdempotencyConflict) works on both sides of the wire.
package ledger
