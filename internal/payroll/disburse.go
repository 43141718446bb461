package payroll

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The disbursement of an approved run: the record steps of the disbursement saga
// (workflows/payroll_disburse.go), each one transaction with its audit rows and outbox events,
// idempotent for the saga's workflow id.
//
//	LoadDisbursePlan    the run APPROVED (or already claimed by this saga) and the employer's
//	                    payroll account (PAYROLL_ACCOUNT_NOT_SET); then the saga's account-lookup
//	                    gate on it (PAYROLL_ACCOUNT_INVALID): a refusal changes nothing
//	ClaimDisbursement   APPROVED → DISBURSING; each entry: net 0 → PAID without a transfer, an
//	                    entry whose payout account is at another partner than the payroll
//	                    account → FAILED (PAYOUT_ACCOUNT_AT_OTHER_PARTNER: a bulk disbursement
//	                    pays within one partner), every other → DISBURSING, to the account it
//	                    was calculated and approved with (not the employee's as it is now)
//	RecordOutcomes      the fan-out's final outcomes, batch by batch: DISBURSING → PAID or FAILED
//	                    (failure_reason = the partner's code), only for the attempt the saga owns
//	FinishDisbursement  DISBURSING → DISBURSED once no entry is APPROVED or DISBURSING
//	                    (payroll.run_disbursed.v1); completion (DISBURSED → COMPLETED) follows
//	ClaimRetry          an operator's retry of a FAILED entry of a DISBURSING or DISBURSED run:
//	                    FAILED → DISBURSING, the next attempt owned by the retry's saga (a new
//	                    partner reference, so the partner does not answer it with the failed one)
//	ReleaseRetry        the retry's saga ended its claim without sending it (the claim's answer
//	                    lost, the fan-out refused): DISBURSING → FAILED again, so another retry
//	                    may claim the entry
//
// Net pay is not journaled: it moves from the employer's own account to the employee's, money
// the platform never holds or owes (doc.go). The entry keeps the partner's reference and transfer
// id of each outcome: that is what the settlement view shows and reconciles against.

// Codes of the disbursement's refusals and entry failures.
const (
	CodePayrollAccountNotSet      = "PAYROLL_ACCOUNT_NOT_SET"
	CodePayrollAccountInvalid     = "PAYROLL_ACCOUNT_INVALID"
	CodePayrollAccountUnavailable = "PAYROLL_ACCOUNT_LOOKUP_UNAVAILABLE"
	CodeEntryNotFound             = "PAYROLL_ENTRY_NOT_FOUND"
	CodeEntryInvalidState         = "PAYROLL_ENTRY_INVALID_STATE"
	// CodeRunCompleting: the run's completion has begun (BeginCompletion): no entry is sent again.
	CodeRunCompleting = "PAYROLL_RUN_COMPLETING"
	// FailurePayoutOtherPartner is the failure_reason of an entry not sent: the employee's
	// payout account is at another partner than the payroll account.
	FailurePayoutOtherPartner = "PAYOUT_ACCOUNT_AT_OTHER_PARTNER"
)

// ErrEntryNotFound: no entry with this id in the tenant's run.
var ErrEntryNotFound = NotFound(CodeEntryNotFound, "payroll entry")

// disburseRefusals are the disbursement saga's refusals by code: what the API answers when the
// saga refuses with one of them.
var disburseRefusals = map[string]Refusal{
	CodeRunNotFound:     *ErrRunNotFound,
	CodeRunInvalidState: {Code: CodeRunInvalidState, Status: http.StatusConflict, Message: "the payroll run is not in a state that allows this"},
	CodePayrollAccountNotSet: {Code: CodePayrollAccountNotSet, Status: http.StatusConflict,
		Message: "the organization has no payroll account: set it in the payroll tenant settings first"},
	CodePayrollAccountInvalid: {Code: CodePayrollAccountInvalid, Status: http.StatusConflict,
		Message: "the partner bank did not confirm the payroll account (unknown, closed, or another holder): nothing was sent"},
	CodePayrollAccountUnavailable: {Code: CodePayrollAccountUnavailable, Status: http.StatusServiceUnavailable,
		Message: "the partner bank could not be asked about the payroll account; nothing was sent, try again later"},
	CodeEntryNotFound: *ErrEntryNotFound,
	CodeRunCompleting: {Code: CodeRunCompleting, Status: http.StatusConflict,
		Message: "the run's completion has begun: its failed entries are final (pay the employee outside the run and record the repayments)"},
	CodeEntryInvalidState: {Code: CodeEntryInvalidState, Status: http.StatusConflict,
		Message: "only a FAILED entry of a DISBURSING or DISBURSED run can be sent again"},
	CodeSelfApproval: {Code: CodeSelfApproval, Status: http.StatusForbidden,
		Message: "you set the employee's new payout account: someone else must send the pay to it"},
}

// DisburseRefusalOf is the refusal of a disbursement saga's code (ok false for another code).
func DisburseRefusalOf(code string) (Refusal, bool) {
	r, ok := disburseRefusals[code]
	return r, ok
}

// Audit actions and events of the disbursement.
const (
	ActionDisburseRun     = "DisbursePayrollRun"
	ActionRunDisbursed    = "PayrollRunDisbursed"
	ActionEntryPaid       = "PayrollEntryPaid"
	ActionEntryFailed     = "PayrollEntryFailed"
	ActionRetryEntry      = "RetryPayrollEntry"
	TargetEntry           = "PayrollEntry"
	EventRunDisbursing    = "payroll.run_disbursing.v1"
	EventRunDisbursed     = "payroll.run_disbursed.v1"
	EventEntryPaid        = "payroll.entry_paid.v1"
	EventEntryFailed      = "payroll.entry_failed.v1"
	EventEntryRetried     = "payroll.entry_retried.v1"
	outcomeSettled        = "SETTLED"
	outcomeFailed         = "FAILED"
	maxFailureReasonBytes = 500
)

// The payroll's bank transfers, settled.
const (
	// EventBankTransferSettled is the spec's <domain>.bank_transfer_settled.v1 of the payroll's
	// transfers (outbox.TransferSettled): an entry's net pay to the employee (kind entry, with
	// payroll.entry_paid.v1; an entry of net 0, PAID without a transfer, has none) and a court
	// order's remittance to its payee (kind court_order_remittance).
	EventBankTransferSettled = "payroll.bank_transfer_settled.v1"
	// transferDomain is the payroll's transfers' money domain (money.ValidDomain).
	transferDomain = money.DomainPayroll
)

// DisbursePlan is what the saga needs before it claims the run.
type DisbursePlan struct {
	RunID   string
	Period  string
	Status  string // APPROVED, or the state a run this saga already claimed is in
	Account Account
}

// LoadDisbursePlan reads the run and the employer's payroll account. A run already claimed by
// wfID answers its state (the saga resumes). Errors: ErrRunNotFound; PAYROLL_RUN_INVALID_STATE;
// PAYROLL_ACCOUNT_NOT_SET.
func LoadDisbursePlan(ctx context.Context, tx db.BunTx, runID, wfID string) (DisbursePlan, error) {
	r, err := getRun(ctx, tx, runID, false)
	if err != nil {
		return DisbursePlan{}, err
	}
	if r.DisbursementWorkflowID != wfID || r.Status == RunApproved {
		if _, err := RunMachine.Next("disbursing", r.Status); err != nil {
			return DisbursePlan{}, err
		}
	}
	s, err := EffectiveSettings(ctx, tx)
	if err != nil {
		return DisbursePlan{}, err
	}
	if s.PayrollAccount == nil {
		r := disburseRefusals[CodePayrollAccountNotSet]
		return DisbursePlan{}, &r
	}
	return DisbursePlan{RunID: r.ID, Period: r.Period, Status: r.Status, Account: *s.PayrollAccount}, nil
}

// DisburseItem is one entry to send: its id, the account it is paid to, its net.
type DisburseItem struct {
	EntryID      string `bun:"id" json:"entryId"`
	ToAccount    string `bun:"payout_account" json:"toAccount"`
	AmountSantim int64  `bun:"net_santim" json:"amountSantim"`
}

// DisburseClaim is the claimed run: the entries the saga sends (by entry id), and how many
// entries were settled without a transfer.
type DisburseClaim struct {
	Status         string
	Items          []DisburseItem
	PaidWithout    int // net 0: PAID without a transfer
	FailedUnsent   int // not sent (FailurePayoutOtherPartner)
	EntriesClaimed int
}

// ClaimDisbursement moves the APPROVED run to DISBURSING for the saga wfID with the payroll
// account at partner (audited DisbursePayrollRun, payroll.run_disbursing.v1) and each entry as
// the table above says. A run this saga already claimed is answered again, with the same items
// (its first attempts, by entry id), whatever became of them since. Errors: ErrRunNotFound;
// PAYROLL_RUN_INVALID_STATE.
func ClaimDisbursement(ctx context.Context, tx db.BunTx, runID, wfID, partner string, now time.Time) (DisburseClaim, error) {
	r, err := getRun(ctx, tx, runID, true)
	if err != nil {
		return DisburseClaim{}, err
	}
	var c DisburseClaim
	if r.Status == RunApproved || r.DisbursementWorkflowID != wfID {
		to, err := RunMachine.Next("disbursing", r.Status)
		if err != nil {
			return c, err
		}
		now = now.UTC()
		var changed []entryChange
		if err := tx.NewRaw(`
			UPDATE app.payroll_entries AS pe SET
				status = CASE WHEN pe.net_santim = 0 THEN 'PAID' WHEN pe.payout_partner <> ? THEN 'FAILED' ELSE 'DISBURSING' END,
				failure_reason = CASE WHEN pe.net_santim <> 0 AND pe.payout_partner <> ? THEN ? END,
				paid_at = CASE WHEN pe.net_santim = 0 THEN ?::timestamptz END,
				attempts = CASE WHEN pe.net_santim = 0 OR pe.payout_partner <> ? THEN 0 ELSE 1 END,
				claim_account = CASE WHEN pe.net_santim = 0 OR pe.payout_partner <> ? THEN NULL ELSE pe.payout_account END,
				updated_at = ?
			WHERE pe.tenant_id = ? AND pe.run_id = ? AND pe.status = 'APPROVED'
			RETURNING pe.id, pe.run_id, pe.period, pe.employee_id, pe.status, pe.net_santim, coalesce(pe.failure_reason, '') AS failure_reason,
				'' AS transfer_reference, pe.attempts`,
			partner, partner, FailurePayoutOtherPartner, now, partner, partner, now, r.TenantID, r.ID).Scan(ctx, &changed); err != nil &&
			!errors.Is(err, sql.ErrNoRows) {
			return c, fmt.Errorf("payroll: claim entries: %w", err)
		}
		c.EntriesClaimed = len(changed)
		var final []entryChange
		for _, e := range changed {
			switch e.Status {
			case EntryPaid:
				c.PaidWithout++
				final = append(final, e)
			case EntryFailed:
				c.FailedUnsent++
				final = append(final, e)
			}
		}
		if err := recordEntryOutcomes(ctx, tx, final); err != nil {
			return c, err
		}
		r.Status, r.DisbursementWorkflowID, r.DisbursingBy, r.DisbursingAt, r.UpdatedAt = to, wfID, tenancy.Actor(ctx), now, now
		if err := updateRun(ctx, tx, &r, "status", "disbursement_workflow_id", "disbursing_by", "disbursing_at", "updated_at"); err != nil {
			return c, err
		}
		if err := recordRun(ctx, tx, ActionDisburseRun, EventRunDisbursing, r, map[string]any{"workflowId": wfID,
			"entries": c.EntriesClaimed, "paidWithoutTransfer": c.PaidWithout, "failedUnsent": c.FailedUnsent}, false); err != nil {
			return c, err
		}
	}
	c.Status = r.Status
	c.Items = []DisburseItem{}
	// The first attempts of this run, by entry id, to the accounts the claim sent them to: the
	// same list on every call, whatever operators' retries did since (a retry's attempt is its
	// own saga's), so a saga resuming the run sends the same batches and items.
	if err := tx.NewRaw(`SELECT id, claim_account AS payout_account, net_santim FROM app.payroll_entries
		WHERE tenant_id = ? AND run_id = ? AND claim_account IS NOT NULL
		  ORDER BY id`,
		r.TenantID, r.ID).Scan(ctx, &c.Items); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("payroll: claimed entries: %w", err)
	}
	return c, nil
}

// entryChange is an entry whose disbursement status changed.
type entryChange struct {
	ID                string `bun:"id" json:"entryId"`
	RunID             string `bun:"run_id" json:"runId"`
	Period            string `bun:"period" json:"period"`
	EmployeeID        string `bun:"employee_id" json:"employeeId"`
	Status            string `bun:"status" json:"status"`
	NetSantim         int64  `bun:"net_santim" json:"netSantim"`
	FailureReason     string `bun:"failure_reason" json:"failureReason,omitempty"`
	TransferReference string `bun:"transfer_reference" json:"transferReference,omitempty"`
	Attempts          int    `bun:"attempts" json:"attempts"`
	// TransferID is the partner's transfer id of a settled entry (RecordOutcomes); not part of
	// the entry's events' payload, which predates it.
	TransferID string `bun:"transfer_id" json:"-"`
}

// recordEntryOutcomes writes the audit row and the event of each entry that became PAID or
// FAILED.
// Each is the payload of payroll.entry_paid.v1 or payroll.entry_failed.v1.
func recordEntryOutcomes(ctx context.Context, tx db.BunTx, es []entryChange) error {
	if len(es) == 0 {
		return nil
	}
	rows := make([]audit.Entry, len(es))
	var paid, failed []any
	for i, e := range es {
		action := ActionEntryPaid
		if e.Status == EntryFailed {
			action = ActionEntryFailed
			failed = append(failed, e)
		} else {
			paid = append(paid, e)
		}
		rows[i] = audit.Entry{Action: action, Outcome: audit.Success, TargetType: TargetEntry, TargetID: e.ID,
			Details: map[string]any{"runId": e.RunID, "netSantim": e.NetSantim, "reason": e.FailureReason, "reference": e.TransferReference,
				"attempt": e.Attempts}}
	}
	if err := audit.WriteMany(ctx, tx, rows); err != nil {
		return err
	}
	if len(paid) > 0 {
		if err := outbox.WriteManyIn(ctx, tx, EventEntryPaid, paid); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return outbox.WriteManyIn(ctx, tx, EventEntryFailed, failed)
	}
	return nil
}

// EntryOutcome is a sent entry's final outcome at the partner: SETTLED or FAILED (Code why).
type EntryOutcome struct {
	EntryID    string `json:"id"`
	Reference  string `json:"reference"`
	TransferID string `json:"transfer_id"`
	Status     string `json:"status"`
	Code       string `json:"code"`
}

// RecordOutcomes records the final outcomes of entries the saga owner sent: each DISBURSING
// entry whose current attempt is owner's (the run's saga for a first attempt, the retry's saga
// for a retry) becomes PAID (SETTLED) or FAILED with the partner's code, with its reference and
// transfer id (audited PayrollEntryPaid / PayrollEntryFailed, payroll.entry_paid.v1 and
// payroll.bank_transfer_settled.v1 / payroll.entry_failed.v1). An outcome recorded already, or
// about an attempt another saga owns now, changes nothing: the fan-out calls this at least once
// per outcome. It answers how many entries changed.
func RecordOutcomes(ctx context.Context, tx db.BunTx, owner string, outs []EntryOutcome, now time.Time) (int, error) {
	if len(outs) == 0 {
		return 0, nil
	}
	for i := range outs {
		if outs[i].Status == outcomeFailed && outs[i].Code == "" {
			outs[i].Code = "TRANSFER_FAILED"
		}
		if len(outs[i].Code) > maxFailureReasonBytes {
			outs[i].Code = outs[i].Code[:maxFailureReasonBytes]
		}
	}
	ids := make([]string, len(outs))
	for i, o := range outs {
		ids[i] = o.EntryID
	}
	raw, err := json.Marshal(outs)
	if err != nil {
		return 0, fmt.Errorf("payroll: outcomes: %w", err)
	}
	var changed []entryChange
	// The outcomes are read once (MATERIALIZED), and the entries are narrowed to theirs by id
	// (pe.id IN): right after a run's calculation the planner's statistics may still say the
	// run has no DISBURSING entry, and it then walks every entry of the run against every outcome
	// (a 500-item batch's record of a 10,000-entry run took 1 to 11 s, 5 million comparisons).
	// Narrowed, a plan is at worst batch × batch, whatever the statistics say.
	if err := tx.NewRaw(`
		WITH o AS MATERIALIZED (SELECT * FROM json_to_recordset(?::json) AS o(id text, reference text, transfer_id text, status text, code text))
		UPDATE app.payroll_entries AS pe SET
			status = CASE WHEN o.status = 'SETTLED' THEN 'PAID' ELSE 'FAILED' END,
			failure_reason = CASE WHEN o.status = 'SETTLED' THEN NULL ELSE o.code END,
			paid_at = CASE WHEN o.status = 'SETTLED' THEN ?::timestamptz END,
			transfer_reference = nullif(o.reference, ''), transfer_id = nullif(o.transfer_id, ''), updated_at = ?
		FROM o, app.payroll_runs AS pr
		WHERE pe.tenant_id = ? AND pe.id IN (?) AND pe.id = o.id AND pe.status = 'DISBURSING' AND o.status IN ('SETTLED', 'FAILED')
		  AND pr.tenant_id = pe.tenant_id AND pr.id = pe.run_id AND coalesce(pe.retry_workflow_id, pr.disbursement_workflow_id) = ?
		RETURNING pe.id, pe.run_id, pe.period, pe.employee_id, pe.status, pe.net_santim, coalesce(pe.failure_reason, '') AS failure_reason,
			coalesce(pe.transfer_reference, '') AS transfer_reference, pe.attempts, coalesce(pe.transfer_id, '') AS transfer_id`,
		string(raw), now.UTC(), now.UTC(), tenancy.TenantID(ctx), bun.List(ids), owner).Scan(ctx, &changed); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("payroll: record outcomes: %w", err)
	}
	if err := recordEntryOutcomes(ctx, tx, changed); err != nil {
		return len(changed), err
	}
	return len(changed), recordEntriesSettled(ctx, tx, changed)
}

// recordEntriesSettled writes payroll.bank_transfer_settled.v1 for each entry of es that became
// PAID: in RecordOutcomes, an entry whose transfer the partner settled. The update above moves
// an entry only from DISBURSING, so an outcome recorded again changes no entry and writes none.
// One statement for the batch, as its other events (a record step carries up to 500 entries).
func recordEntriesSettled(ctx context.Context, tx db.BunTx, es []entryChange) error {
	var settled []outbox.TransferSettled
	for _, e := range es {
		if e.Status != EntryPaid {
			continue
		}
		settled = append(settled, outbox.TransferSettled{Domain: transferDomain, Kind: "entry", SubjectID: e.ID, AmountSantim: e.NetSantim,
			TransferID: e.TransferID, PartnerReference: e.TransferReference, Keys: map[string]any{"entryId": e.ID, "runId": e.RunID}})
	}
	return outbox.WriteTransfersSettled(ctx, tx, settled)
}

// FinishDisbursement makes a DISBURSING run DISBURSED once none of its entries is APPROVED or
// DISBURSING (audited PayrollRunDisbursed, payroll.run_disbursed.v1 with the counts) and answers
// the run as it is then: still DISBURSING while an entry is being paid (an operator's retry in
// flight: its saga finishes the run), or DISBURSED / COMPLETED already (no change). This is the
// step after which the run's completion starts (workflows/payroll_disburse.go, runDisbursed).
// Errors: ErrRunNotFound.
func FinishDisbursement(ctx context.Context, tx db.BunTx, runID string, now time.Time) (Run, error) {
	r, err := getRun(ctx, tx, runID, true)
	if err != nil || r.Status != RunDisbursing {
		return r, err
	}
	counts, err := EntryCounts(ctx, tx, r.ID)
	if err != nil {
		return r, err
	}
	if counts[EntryApproved]+counts[EntryDisbursing] > 0 {
		return r, nil
	}
	to, err := RunMachine.Next("disbursed", r.Status)
	if err != nil {
		return r, err
	}
	now = now.UTC()
	r.Status, r.DisbursedAt, r.UpdatedAt = to, now, now
	if err := updateRun(ctx, tx, &r, "status", "disbursed_at", "updated_at"); err != nil {
		return r, err
	}
	return r, recordRun(ctx, tx, ActionRunDisbursed, EventRunDisbursed, r, map[string]any{"paid": counts[EntryPaid],
		"failed": counts[EntryFailed]}, false)
}

// RetryClaim is an entry claimed for another attempt: the item to send and the payroll account.
type RetryClaim struct {
	Item    DisburseItem
	Attempt int
	Account Account
}

// ClaimRetry claims a FAILED entry of a DISBURSING or DISBURSED run for another attempt owned by
// the saga wfID: FAILED → DISBURSING, the employee's payout account read again (it may have been
// corrected; RetryPayout) and kept on the entry, the attempt counted (audited RetryPayrollEntry,
// payroll.entry_retried.v1). The run stays where it is. The same saga claiming again is answered the same claim. Errors:
// ErrRunNotFound; ErrEntryNotFound; PAYROLL_RUN_COMPLETING (the completion has begun,
// BeginCompletion); PAYROLL_RUN_INVALID_STATE; PAYROLL_ENTRY_INVALID_STATE;
// PAYROLL_ACCOUNT_NOT_SET; PAYROLL_SELF_APPROVAL (RetryPayout).
func ClaimRetry(ctx context.Context, tx db.BunTx, runID, entryID, wfID string, now time.Time) (RetryClaim, error) {
	r, err := getRun(ctx, tx, runID, true)
	if err != nil {
		return RetryClaim{}, err
	}
	var e Entry
	if err := tx.NewSelect().Model(&e).Where("pe.tenant_id = ?", r.TenantID).Where("pe.run_id = ?", r.ID).Where("pe.id = ?", entryID).
		For("UPDATE").Scan(ctx); errors.Is(err, sql.ErrNoRows) {
		return RetryClaim{}, ErrEntryNotFound
	} else if err != nil {
		return RetryClaim{}, fmt.Errorf("payroll: entry: %w", err)
	}
	s, err := EffectiveSettings(ctx, tx)
	if err != nil {
		return RetryClaim{}, err
	}
	if s.PayrollAccount == nil {
		rf := disburseRefusals[CodePayrollAccountNotSet]
		return RetryClaim{}, &rf
	}
	if e.RetryWorkflowID == wfID && e.RetryWorkflowID != "" {
		return RetryClaim{Item: DisburseItem{EntryID: e.ID, ToAccount: e.PayoutAccount, AmountSantim: e.NetSantim},
			Attempt: e.Attempts, Account: *s.PayrollAccount}, nil
	}
	if r.Status != RunDisbursing && r.Status != RunDisbursed {
		return RetryClaim{}, &Refusal{Code: CodeRunInvalidState, Status: http.StatusConflict,
			Message: "a payroll run that is " + r.Status + " has no failed payment to send again",
			Details: map[string]any{"status": r.Status, "allowedFrom": []string{RunDisbursing, RunDisbursed}}}
	}
	if !r.CompletingAt.IsZero() {
		rf := disburseRefusals[CodeRunCompleting]
		rf.Details = map[string]any{"status": r.Status, "completingAt": r.CompletingAt.UTC()}
		return RetryClaim{}, &rf
	}
	if e.Status != EntryFailed {
		rf := disburseRefusals[CodeEntryInvalidState]
		rf.Details = map[string]any{"status": e.Status, "allowedFrom": []string{EntryFailed}}
		return RetryClaim{}, &rf
	}
	to, err := RetryPayout(ctx, tx, e)
	if err != nil {
		return RetryClaim{}, err
	}
	if to.Partner != s.PayrollAccount.Partner {
		rf := disburseRefusals[CodeEntryInvalidState]
		rf.Message = "the employee's payout account is not at the payroll account's partner: correct it, then retry"
		rf.Details = map[string]any{"status": e.Status, "failureReason": FailurePayoutOtherPartner}
		return RetryClaim{}, &rf
	}
	now = now.UTC()
	previous, previousAccount := e.FailureReason, e.PayoutAccount
	e.Status, e.FailureReason, e.Attempts, e.RetryWorkflowID = EntryDisbursing, "", e.Attempts+1, wfID
	e.PayoutPartner, e.PayoutAccount, e.PayoutHolderName = to.Partner, to.AccountNumber, to.HolderName
	e.TransferReference, e.TransferID, e.UpdatedAt = "", "", now
	if err := updateRow(ctx, tx, &e, "pe", r.TenantID, "status", "failure_reason", "attempts", "payout_partner", "payout_account",
		"payout_holder_name", "retry_workflow_id", "transfer_reference", "transfer_id", "updated_at"); err != nil {
		return RetryClaim{}, fmt.Errorf("payroll: retry entry: %w", err)
	}
	if err := recordChange(ctx, tx, ActionRetryEntry, TargetEntry, e.ID, map[string]any{"runId": r.ID, "attempt": e.Attempts,
		"previousReason": previous, "workflowId": wfID, "accountChanged": previousAccount != e.PayoutAccount},
		EventEntryRetried, entryChange{ID: e.ID, RunID: r.ID, Period: r.Period, EmployeeID: e.EmployeeID, Status: e.Status,
			NetSantim: e.NetSantim, Attempts: e.Attempts}); err != nil {
		return RetryClaim{}, err
	}
	return RetryClaim{Item: DisburseItem{EntryID: e.ID, ToAccount: e.PayoutAccount, AmountSantim: e.NetSantim}, Attempt: e.Attempts,
		Account: *s.PayrollAccount}, nil
}

// ReleaseRetry gives back an entry the retry's saga wfID claimed (ClaimRetry) and never sent:
// DISBURSING → FAILED with reason (audited PayrollEntryFailed, payroll.entry_failed.v1), so that
// another retry may claim it. Without it the entry stayed DISBURSING under a saga that had ended:
// ClaimRetry refuses an entry that is not FAILED, no saga would ever record its outcome, and the
// run's completion refuses a run with an entry being sent (PAYROLL_RUN_ENTRIES_UNSETTLED; found by
// an audit). The caller must know that nothing was sent under the claim: an entry released while
// its transfer is with the partner would be paid twice by the next retry. An entry that is not
// DISBURSING under wfID's attempt (the saga never claimed it, released it already, or its outcome
// was recorded) is left alone: it answers how many entries changed (0 or 1). Errors:
// ErrRunNotFound.
func ReleaseRetry(ctx context.Context, tx db.BunTx, runID, entryID, wfID, reason string, now time.Time) (int, error) {
	r, err := getRun(ctx, tx, runID, true)
	if err != nil {
		return 0, err
	}
	if reason == "" {
		reason = "RETRY_NOT_SENT"
	}
	if len(reason) > maxFailureReasonBytes {
		reason = reason[:maxFailureReasonBytes]
	}
	var changed []entryChange
	if err := tx.NewRaw(`
		UPDATE app.payroll_entries AS pe SET status = 'FAILED', failure_reason = ?, updated_at = ?
		WHERE pe.tenant_id = ? AND pe.run_id = ? AND pe.id = ? AND pe.status = 'DISBURSING' AND pe.retry_workflow_id = ?
		RETURNING pe.id, pe.run_id, pe.period, pe.employee_id, pe.status, pe.net_santim, coalesce(pe.failure_reason, '') AS failure_reason,
			'' AS transfer_reference, pe.attempts`,
		reason, now.UTC(), r.TenantID, r.ID, entryID, wfID).Scan(ctx, &changed); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("payroll: release retry: %w", err)
	}
	return len(changed), recordEntryOutcomes(ctx, tx, changed)
}

// RetryPayout is where an operator's retry of entry e sends its pay: the employee's payout
// account now (it may have been corrected since the entry failed). When that is not the account
// the entry was approved with (or last sent to), it is paid on two people's word, as the run
// was: the actor (the context's) must not be who set that account (employees.Update records it).
// Errors: PAYROLL_SELF_APPROVAL (403); PAYROLL_ENTRY_INVALID_STATE (409: the employee is gone).
func RetryPayout(ctx context.Context, tx db.BunTx, e Entry) (Account, error) {
	var now []struct {
		Partner   string `bun:"payout_partner"`
		Number    string `bun:"payout_account_number"`
		Holder    string `bun:"payout_holder_name"`
		ChangedBy string `bun:"changed_by"`
	}
	if err := tx.NewRaw(`SELECT payout_partner, payout_account_number, payout_holder_name,
			coalesce(payout_changed_by, '') AS changed_by
		FROM app.employees WHERE tenant_id = ? AND id = ?`, e.TenantID, e.EmployeeID).Scan(ctx, &now); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return Account{}, fmt.Errorf("payroll: employee account: %w", err)
	}
	if len(now) == 0 {
		rf := disburseRefusals[CodeEntryInvalidState]
		rf.Message = "the entry's employee has no payout account to send to"
		return Account{}, &rf
	}
	to := Account{Partner: now[0].Partner, AccountNumber: now[0].Number, HolderName: now[0].Holder}
	if to == (Account{Partner: e.PayoutPartner, AccountNumber: e.PayoutAccount, HolderName: e.PayoutHolderName}) {
		return to, nil
	}
	if now[0].ChangedBy != "" && now[0].ChangedBy == tenancy.Actor(ctx) {
		rf := disburseRefusals[CodeSelfApproval]
		rf.Details = map[string]any{"entryId": e.ID}
		return Account{}, &rf
	}
	return to, nil
}

// GetEntry reads one entry of the tenant's run (ErrRunNotFound, ErrEntryNotFound).
func GetEntry(ctx context.Context, tx db.BunTx, runID, entryID string) (Entry, error) {
	if _, err := getRun(ctx, tx, runID, false); err != nil {
		return Entry{}, err
	}
	var e Entry
	err := tx.NewSelect().Model(&e).Where("pe.tenant_id = ?", tenancy.TenantID(ctx)).Where("pe.run_id = ?", runID).
		Where("pe.id = ?", entryID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return e, ErrEntryNotFound
	}
	return e, err
}

// StatusTotal is the entries of one status: how many, and their net.
type StatusTotal struct {
	Status    string `bun:"status"`
	Entries   int    `bun:"n"`
	NetSantim int64  `bun:"net"`
}

// SettlementTotals are a run's entries by status (every status of the disbursement, 0 included).
func SettlementTotals(ctx context.Context, tx db.BunTx, runID string) ([]StatusTotal, error) {
	rows, err := db.Select[StatusTotal](ctx, tx, `SELECT status, count(*) AS n, coalesce(sum(net_santim), 0) AS net
		FROM app.payroll_entries WHERE tenant_id = ? AND run_id = ? AND status IN (?) GROUP BY status`,
		tenancy.TenantID(ctx), runID, bun.List(settlementStatuses))
	if err != nil {
		return nil, fmt.Errorf("payroll: settlement totals: %w", err)
	}
	out := make([]StatusTotal, len(settlementStatuses))
	for i, s := range settlementStatuses {
		out[i].Status = s
		for _, r := range rows {
			if r.Status == s {
				out[i] = r
			}
		}
	}
	return out, nil
}

// settlementStatuses are the entry states the settlement view counts.
var settlementStatuses = []string{EntryApproved, EntryDisbursing, EntryPaid, EntryFailed}

// DisbursementProgress is how far the run's disbursement saga has paid the entries it sends (its
// fan-out's items: the entries with a net above 0 sent by their first attempt at the claim,
// ClaimDisbursement's Items), counted from the entries as the record steps leave them: Items
// sent, Batches of batchSize in the fan-out's order (by entry id), BatchesDone those whose every
// item is PAID or FAILED, and the items PAID (Settled) and FAILED, each with its net. An item an
// operator retries counts by its current state (DISBURSING again: not settled, not failed, its
// batch not done). Every figure is the committed state of the entries: it is as fresh as the
// last record step and needs no workflow to answer.
type DisbursementProgress struct {
	Items, Batches, BatchesDone int
	Settled, Failed             int
	SettledSantim, FailedSantim int64
	// Entries counts every entry of the run by status, as EntryCounts does (read in the same
	// scan: a paying run's read counts both).
	Entries map[string]int
}

// ReadDisbursementProgress reads the run's DisbursementProgress with the fan-out's batchSize (one
// query, one scan of the run's entries).
func ReadDisbursementProgress(ctx context.Context, tx db.Writer, runID string, batchSize int) (DisbursementProgress, error) {
	if batchSize <= 0 {
		return DisbursementProgress{}, fmt.Errorf("payroll: disbursement progress: batch size %d", batchSize)
	}
	rows, err := db.Select[struct {
		Items         int             `bun:"items" db:"items"`
		Batches       int             `bun:"batches" db:"batches"`
		BatchesDone   int             `bun:"batches_done" db:"batches_done"`
		Settled       int             `bun:"settled" db:"settled"`
		Failed        int             `bun:"failed" db:"failed"`
		SettledSantim int64           `bun:"settled_santim" db:"settled_santim"`
		FailedSantim  int64           `bun:"failed_santim" db:"failed_santim"`
		Entries       json.RawMessage `bun:"entries" db:"entries"`
	}](ctx, tx, `
		WITH entries AS MATERIALIZED (
			SELECT id, status, net_santim, claim_account IS NOT NULL AS sent
			FROM app.payroll_entries WHERE tenant_id = ? AND run_id = ?),
		sent AS (
			SELECT status, net_santim, (row_number() OVER (ORDER BY id) - 1) / ? AS batch FROM entries WHERE sent),
		batches AS (
			SELECT count(*) AS items, bool_and(status IN ('PAID', 'FAILED')) AS done,
				count(*) FILTER (WHERE status = 'PAID') AS settled, count(*) FILTER (WHERE status = 'FAILED') AS failed,
				coalesce(sum(net_santim) FILTER (WHERE status = 'PAID'), 0) AS settled_santim,
				coalesce(sum(net_santim) FILTER (WHERE status = 'FAILED'), 0) AS failed_santim
			FROM sent GROUP BY batch)
		SELECT coalesce(sum(items), 0)::bigint AS items, count(*) AS batches, count(*) FILTER (WHERE done) AS batches_done,
			coalesce(sum(settled), 0)::bigint AS settled, coalesce(sum(failed), 0)::bigint AS failed,
			coalesce(sum(settled_santim), 0)::bigint AS settled_santim, coalesce(sum(failed_santim), 0)::bigint AS failed_santim,
			(SELECT coalesce(json_object_agg(status, n), '{}') FROM (SELECT status, count(*) AS n FROM entries GROUP BY status) c) AS entries
		FROM batches`, tenancy.TenantID(ctx), runID, batchSize)
	if err != nil {
		return DisbursementProgress{}, fmt.Errorf("payroll: disbursement progress: %w", err)
	}
	out := DisbursementProgress{Entries: make(map[string]int, len(EntryStatuses))}
	for _, s := range EntryStatuses {
		out.Entries[s] = 0
	}
	if len(rows) == 0 {
		return out, nil
	}
	r := rows[0]
	var counts map[string]int
	if err := json.Unmarshal(r.Entries, &counts); err != nil {
		return out, fmt.Errorf("payroll: disbursement progress: entry counts: %w", err)
	}
	for s, n := range counts {
		out.Entries[s] = n
	}
	out.Items, out.Batches, out.BatchesDone, out.Settled, out.Failed = r.Items, r.Batches, r.BatchesDone, r.Settled, r.Failed
	out.SettledSantim, out.FailedSantim = r.SettledSantim, r.FailedSantim
	return out, nil
}
