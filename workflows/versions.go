package workflows

// The GetVersion change ids of every saga, in one home. A change to a deployed workflow's command
// sequence gets an id here and a workflow.GetVersion at the point where the sequence changes;
// runs begun before it keep the old sequence (the replay tests over testdata hold them to it).

// legReferenceChange (EwaDisburse): the saga's transfer got a leg reference (partnerref.Leg:
// "<workflow id>.ewa-disburse.1", also put on the ledger posting as "bank_reference") instead of
// the bare workflow id, which reconciliation could not tie to the posting. Runs begun before it
// keep the workflow id for every lookup of their transfer: the partner holds it under that
// reference.
const legReferenceChange = "partner-leg-reference"

// ewaFewerStepsChange (EwaDisburse): fewer, larger record steps. The plan and the KYC and
// sanctions gates are one step in one transaction (ewa.Begin), the pending ledger transaction is
// posted before the claim, and the claim records it in the same transaction
// (ewa.ClaimWithLedgerTx; a refused claim voids it). Runs begun before it keep LoadPlan, the
// gates one by one, Claim, the posting and SetLedgerTx.
const ewaFewerStepsChange = "ewa-fewer-record-steps"

// ewaOneVersionChange (EwaDisburse): runs begun after it ask this one version and no other. It
// implies ewaFewerStepsChange's steps and legReferenceChange's leg reference, which such runs no
// longer ask: every GetVersion a run asks records a marker and upserts the TemporalChangeVersion
// search attribute (a visibility write on the server), two per saga before it, one now. The
// steps and their inputs are those of ewaFewerStepsChange. Runs begun before it ask the two.
const ewaOneVersionChange = "ewa-one-version"

// ewaInputShapeChange (EwaDisburse): runs whose input carries Shape = EwaShapeNoVersion (the
// API starts every disbursement so) take ewaOneVersionChange's steps without asking any version:
// the input is the history's first event, so it fixes the command sequence for every replay as
// a version marker would, without the marker and the TemporalChangeVersion upsert (a visibility
// write on the server) that asking costs each run. Runs started without it ask
// ewaOneVersionChange as before. Not a GetVersion id: a later change of the saga's sequence
// takes a new Shape value (or a GetVersion asked only by runs of a new Shape). Since the API
// chooses the Shape, a release that adds one rolls out the workers before the API: a worker that
// does not know the Shape would run another sequence under a history that names it.
const ewaInputShapeChange = EwaShapeNoVersion

// ewaLeaveTimerChange (EwaDisburse, a Shape as ewaInputShapeChange is): runs started with Shape =
// EwaShapeLeaveTimer (the API's, after it) take ewaInputShapeChange's steps, and their settlement
// wait leaves the lookup timer pending when the bank's signal ends it (payout.leaveTimer), instead
// of cancelling it: the run completes right after and the timer with it, so a CancelTimer command
// and its TimerCanceled event fewer per saga. A signal that leaves a leg open (a duplicate, another
// reference) still cancels the timer before the next. Continued runs carry the Shape in their input.
const ewaLeaveTimerChange = EwaShapeLeaveTimer

// reconcileEveryoneChange (Reconcile): a run without tenants (the schedule's) first finds every
// tenant with partner-bank mirror accounts (FindPairs) and reconciles them, and every run ends by
// recording itself (RecordReconciliation, which svc_reconcile_last_success_timestamp_seconds
// reads). Runs begun before it reconciled only the tenants they were given and recorded nothing.
const reconcileEveryoneChange = "reconcile-everyone"

// loanDelinquencyWatchChange (LoanDisburse): a loan the saga makes ACTIVE gets its delinquency
// watch (StartLoanDelinquency, an abandoned child). Runs begun before it start none.
const loanDelinquencyWatchChange = "loan-delinquency-watch"

// loanRepayNudgeChange (LoanRepay): a recorded repayment signals the loan's delinquency watch
// (SignalLoanDelinquency) so a loan that caught up leaves its bucket without waiting for the
// watch's next timer. Runs begun before it signal nothing.
const loanRepayNudgeChange = "loan-repay-nudge-delinquency"

// bnplMerchantCallbackChange (BnplActivate): a merchant callback signalled to the running saga
// (bnpl.MerchantCallbackSignalName) is applied to the agreement (BnplApplyMerchantCallback: its
// merchant status) instead of being left unread in the history. Taken when the first callback is
// handled; histories recorded before it replay with theirs unread.
const bnplMerchantCallbackChange = "bnpl-merchant-callback"

// savingsAutosaveChange (PayrollCompleteBatch): a SAVINGS_AUTOSAVE line is deposited into its goal
// by SavingsMove with a payroll source (a child workflow) instead of being refused
// PAYROLL_PRODUCT_NOT_COLLECTED. Taken when the first such line is applied; runs begun before it
// keep the refusal.
const savingsAutosaveChange = "payroll-complete-savings-autosave"

// payrollRetryStrandedChange (PayrollEntryRetry): an entry's retry no longer ends with the entry
// left DISBURSING under it. A fan-out that failed is paid again under the same id; a fan-out that
// refused its input, and a claim step that ended without an answer, release the claim
// (activities.PayrollRetryRelease: the entry FAILED again, for another retry). Taken at the first
// such failure; histories recorded before it end with the error there.
const payrollRetryStrandedChange = "payroll-entry-retry-stranded-claim"

// disputeEarlierPostingChange (Dispute): a decision first waits for the investigation step and is
// refused DISPUTE_INVALID_STATE when the dispute is no longer open, then asks the ledger what the
// dispute's workflow already holds under its keys (activities.DisputePostingsOf): a run that ended
// (terminated, failed) after its decision's posting and before the record left the money moved
// and the dispute undecided, and the API starts a new run under the same id for the next decision.
// The same decision records that posting instead of posting again; another is refused
// DISPUTE_OTHER_DECISION_POSTED. Taken when a decision is handled; runs begun before it post at
// once.
const disputeEarlierPostingChange = "dispute-earlier-posting"

// disputeOneKeyChange (Dispute): a decision's reversal and adjustment post under the workflow's
// one decision key (activities.DisputeDecisionKey; the API signs adjustments under it), and a
// decision that posts nothing closes that key in the ledger before it is recorded: an ended run's
// posting still on its way when a new run decided otherwise could land beside the new decision
// (both a reversal and an adjustment: the employee refunded twice; or a no-action decision with
// the money moved). A conflict on the key is settled by what the key holds. Taken when a decision
// moves money; runs that decided before it post under a key per kind.
const disputeOneKeyChange = "dispute-one-key"
