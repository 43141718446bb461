// Package ledger is Wagerail's double-entry ledger, the only source of truth for money: the chart
// of accounts, the posting validator, the Postgres store (schema ledger), the gRPC service and its
// Go client. It must not call partner banks or know about HTTP.
//
// # Model
//
// Accounts (asset, liability, income, expense, equity, each with its normal side) are named by
// the chart, package ledger/chart: a leaf that the workflows, the API, the gateway and
// reconciliation import to build account names without importing the ledger. There is no cash
// account: money at partner banks is mirrored per bank account as partner-bank:<partner>:<account>. Transactions carry a tenant, an idempotency key
// unique per tenant, a status (PENDING -> POSTED | VOIDED, POSTED -> REVERSED), metadata and the
// lineage of the saga step that made them. Entries are append-only. A two-phase posting writes
// HOLD entries; its commit appends the POSTED entries and RELEASE entries that cancel the holds,
// its void appends only the releases. A void by idempotency key that finds no transaction voids
// the key (ledger.voided_keys): a posting under it is then refused KEY_VOIDED, so a posting whose
// caller gave up and voided it cannot land later. Nothing is ever updated, so:
//
//   - balances are derived from entries (posted, open holds, available), never stored in a
//     mutable column;
//   - per account, entry sequence numbers follow commit order (the entries trigger takes a
//     per-account lock before it draws the number), so the sums of an account's entries up to a
//     sequence number never change. Those sums are stored as immutable checkpoints, written by a
//     balance read when more than CheckpointEvery entries follow the newest one; a read is the
//     newest checkpoint plus the few entries after it, from a covering index. GetBalance and
//     GetBalances (up to MaxGetBalances accounts of a tenant, one snapshot) are one statement,
//     the same for one account or many, so a batch answers each account as a read of its own
//     would, an absent account included (ACCOUNT_NOT_FOUND, in its own result). Only the database
//     function ledger.write_checkpoint (SECURITY DEFINER) writes a checkpoint, computing the sums
//     itself: the runtime role cannot write one, so a checkpoint cannot say what the entries do
//     not. VerifyCheckpoints (gRPC) and `wagerail ledger verify-checkpoints TENANT...` recompute
//     them all.
//
// # Bounds
//
// Amounts have the bounds of internal/platform/money: an entry at most MaxAmountSantim, a transaction's
// debits at most MaxTransactionSantim (AMOUNT_OUT_OF_RANGE), and each running total of an
// account, its debits and its credits (posted plus open holds), at most MaxAccountTotalSantim
// (ACCOUNT_LIMIT_EXCEEDED, FailedPrecondition: a valid posting that the account's state
// refuses). So every sum a balance read makes fits int64, and balance reads never fail on what
// the ledger accepted. A transaction moves money between accounts: entries all on one account
// are SINGLE_ACCOUNT.
//
// The database keeps the invariants itself (schema/migrations/ledger): entries and checkpoints
// refuse UPDATE/DELETE/TRUNCATE (triggers, and no privilege for the runtime role), every
// statement that inserts entries must leave its transactions balanced per phase and on a
// transaction of the entries' own tenant and currency, a transaction is inserted together with
// its entries (one statement) and they must match its status, as again at commit after a status
// change (deferred constraint trigger), a composite foreign key refuses accounts of
// another tenant or currency, status moves only forward, a transaction is reversed at most once,
// reversals and adjustments have their required shape, column values stay in their domains
// (amounts in (0, MaxAmountSantim], known kinds, statuses, phases and directions, currency
// codes), a transaction's debits stay within MaxTransactionSantim and touch more than one
// account, each account's running totals (ledger.account_totals, written only by a SECURITY
// DEFINER trigger under the account lock) stay within MaxAccountTotalSantim, and row-level
// security is forced on every table. Migration 0003 explains why the statement check
// reads each transaction through a grouped LATERAL subquery instead of a join (stale
// statistics), 0004 why the value rules of transactions and entries are domains rather than
// table CHECK constraints (cost per statement), 0005 how the bounds and the checkpoint function
// are kept.
//
// # Edge
//
// Every string of every request is checked with internal/platform/field before anything reaches the
// database (tenant ids are identifiers, idempotency keys references, reasons and lineage free
// text, ids uuids in canonical form, page tokens of the ledger's own form, timestamps within
// 0001-9999): control characters, invalid UTF-8 and oversized values are INVALID_ARGUMENT.
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
