package workflows

import (
	"github.com/wagerail/wagerail/internal/ewa"
)

// The disburse saga's contract with its callers (the API's disburse route, tests): names, input,
// the update that answers the HTTP call, and the result. The orchestration is in ewa_disburse.go.

// Registered names.
const (
	EwaDisburseWorkflowName = "EwaDisburse"
	// DisburseAcceptedUpdate completes once the gates have passed and the partner transfer has
	// been initiated (DisburseAccepted), or with the refusal (an ApplicationError whose Type is
	// the API code, e.g. EWA_KYC_NOT_APPROVED). The API sends it with Update-with-Start.
	DisburseAcceptedUpdate = "disburse-accepted"
	// DisburseAcceptedUpdateID is the update's fixed id: a second send to the same run is the
	// same update and gets the same answer.
	DisburseAcceptedUpdateID = "accepted"
	// DisburseStatusQuery answers the saga's current stage (DisburseProgress).
	DisburseStatusQuery = "status"
)

// EwaDisburseInput starts the saga. The workflow id is idempotency.WorkflowID(tenant, route,
// Idempotency-Key); the transfer's partner reference is its leg reference
// (partnerref.Leg(partnerref.EwaDisburse, workflow id, 1)), from which callbacks find the saga.
type EwaDisburseInput struct {
	TenantID  string
	RequestID string
	ActorID   string // the user who asked (audit rows of the API); the saga's steps act as system:ewa-disburse
	// CorrelationID is the HTTP request id, carried into activity logs and audit rows.
	CorrelationID string
	// Resume is set on a run the saga continued as new while the partner held the transfer: the
	// run skips to the wait for the settlement with the state it carries.
	Resume *DisburseResume `json:",omitempty"`
	// Shape is the command sequence the run takes, fixed by its starter in its recorded input
	// (EwaShapeNoVersion: see ewaInputShapeChange in versions.go); "" asks the versions.
	Shape string `json:",omitempty"`
}

// EwaShapeNoVersion is the Shape of a run that asks no version: its steps are those of
// ewaOneVersionChange, and it records no version marker and upserts no TemporalChangeVersion
// search attribute.
const EwaShapeNoVersion = "ewa-input-shape-1"

// EwaShapeLeaveTimer is EwaShapeNoVersion where the settlement wait leaves its lookup timer
// pending instead of cancelling it when the bank's signal ends the wait (see ewaLeaveTimerChange).
// The API starts every disbursement with it.
const EwaShapeLeaveTimer = "ewa-input-shape-2"

// DisburseResume is what a run of the disburse saga hands the next one when it continues as new
// while it waits for the settlement: its plan and the payout block's state (PayoutResume).
type DisburseResume = PayoutResume[ewa.Plan]

// DisburseAccepted is the update's answer once the transfer is initiated.
type DisburseAccepted struct {
	RequestID  string
	Status     string // DISBURSING, or DISBURSED/FAILED when the partner answered at once
	WorkflowID string
}

// EwaDisburseResult is the workflow's result.
type EwaDisburseResult struct {
	RequestID  string
	Status     string // DISBURSED, FAILED, or REFUSED (a gate or state refusal: nothing moved)
	Code       string // the refusal's or failure's code
	Reason     string
	LedgerTxID string
	TransferID string
}

// Result statuses (EwaDisburseResult.Status) besides the request's own. A result's status is the
// stage its run ended in (payoutOutcome): StageDisbursed, StageFailed and StageRefused are these.
const (
	ResultDisbursed = string(ewa.Disbursed)
	ResultFailed    = string(ewa.Failed)
	ResultRefused   = "REFUSED"
)

// DisburseProgress is DisburseStatusQuery's answer.
type DisburseProgress struct {
	RequestID  string
	Stage      string
	Code       string // a refusal's or failure's code
	LedgerTxID string
	TransferID string
	// TransferStatus is the partner's last word (PENDING, SETTLED, FAILED), "" before it.
	TransferStatus string
}
