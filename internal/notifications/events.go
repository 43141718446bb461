package notifications

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/outbox"
)

// Message kinds (a template each).
const (
	kindEwaDisbursed   = "ewa_disbursed"
	kindLoanDisbursed  = "loan_disbursed"
	kindPayslip        = "payslip"
	kindKycRequested   = "kyc_requested"
	kindKycApproved    = "kyc_approved"
	kindKycRejected    = "kyc_rejected"
	kindKycMoreInfo    = "kyc_more_info"
	kindKycExpired     = "kyc_expired"
	kindDisputeOpened  = "dispute_opened"
	kindDisputeDecided = "dispute_decided"
)

// subscription is what the consumer does with one event type.
type subscription struct {
	kind     string
	category Category
	parse    func(json.RawMessage) (subject, facts, error)
	// reached, when set, records in the event's tenant that the message reached its user on
	// channels (at least one), once per delivery of the event (a redelivery calls it again).
	reached func(ctx context.Context, tx pgx.Tx, e outbox.Event, who subject, channels []Channel, now time.Time) error
}

// subject is who an event is about: an employee of the event's tenant, a login user, or a
// dispute's customer (disputes.CustomerEmployee).
type subject struct {
	EmployeeID string
	UserID     string
	DisputeID  string
}

// The kyc package's event types (its map of them is its own): the user-facing ones. The
// reviewers' kyc.claimed.v1 and the national ID registry's kyc.registry_checked.v1 are not taken:
// an applicant is never told what the registry answered.
const (
	EventKycVerificationRequested = "kyc.verification_requested.v1"
	EventKycApproved              = "kyc.approved.v1"
	EventKycRejected              = "kyc.rejected.v1"
	EventKycMoreInfoRequested     = "kyc.more_info_requested.v1"
	EventKycExpired               = "kyc.expired.v1"
)

var subscriptions = map[string]subscription{
	ewa.EventDisbursed:            {kindEwaDisbursed, CategoryEWA, parseEwa, nil},
	lending.EventLoanDisbursed:    {kindLoanDisbursed, CategoryLoan, parseLoan, nil},
	payroll.EventDeductionsTaken:  {kindPayslip, CategoryPayroll, parsePayslip, nil},
	EventKycVerificationRequested: {kindKycRequested, CategoryKYC, parseKyc, nil},
	EventKycApproved:              {kindKycApproved, CategoryKYC, parseKyc, nil},
	EventKycRejected:              {kindKycRejected, CategoryKYC, parseKyc, nil},
	EventKycMoreInfoRequested:     {kindKycMoreInfo, CategoryKYC, parseKyc, nil},
	EventKycExpired:               {kindKycExpired, CategoryKYC, parseKyc, nil},
	disputes.EventTypeOpened:      {kindDisputeOpened, CategoryDispute, parseDisputeOpened, nil},
	disputes.EventTypeDecided:     {kindDisputeDecided, CategoryDispute, parseDisputeDecided, disputeCustomerReached},
}

// EventTypes are the event types the consumer takes, in a stable order.
func EventTypes() []string {
	return []string{ewa.EventDisbursed, lending.EventLoanDisbursed, payroll.EventDeductionsTaken,
		EventKycVerificationRequested, EventKycApproved, EventKycRejected, EventKycMoreInfoRequested, EventKycExpired,
		disputes.EventTypeOpened, disputes.EventTypeDecided}
}

// maxRef bounds an id quoted in a message.
const maxRef = 64

func parseEwa(p json.RawMessage) (subject, facts, error) {
	var v struct {
		RequestID       string `json:"requestId"`
		EmployeeID      string `json:"employeeId"`
		PrincipalSantim int64  `json:"principalSantim"`
		FeeSantim       int64  `json:"feeSantim"`
	}
	if err := json.Unmarshal(p, &v); err != nil || v.EmployeeID == "" {
		return subject{}, facts{}, fmt.Errorf("notifications: ewa.disbursed payload: employeeId required")
	}
	return subject{EmployeeID: v.EmployeeID}, facts{Amount: etb(v.PrincipalSantim), Fee: etb(v.FeeSantim), Reference: clean(v.RequestID, maxRef)}, nil
}

func parseLoan(p json.RawMessage) (subject, facts, error) {
	var v struct {
		LoanID          string `json:"loanId"`
		BorrowerID      string `json:"borrowerId"`
		PrincipalSantim int64  `json:"principalSantim"`
	}
	if err := json.Unmarshal(p, &v); err != nil || v.BorrowerID == "" {
		return subject{}, facts{}, fmt.Errorf("notifications: loan.disbursed payload: borrowerId required")
	}
	return subject{EmployeeID: v.BorrowerID}, facts{Amount: etb(v.PrincipalSantim), Reference: clean(v.LoanID, maxRef)}, nil
}

func parsePayslip(p json.RawMessage) (subject, facts, error) {
	var v struct {
		EntryID          string `json:"entryId"`
		EmployeeID       string `json:"employeeId"`
		Period           string `json:"period"`
		GrossSantim      int64  `json:"grossSantim"`
		DeductionsSantim int64  `json:"deductionsSantim"`
		NetSantim        int64  `json:"netSantim"`
	}
	if err := json.Unmarshal(p, &v); err != nil || v.EmployeeID == "" {
		return subject{}, facts{}, fmt.Errorf("notifications: payroll.deductions_taken payload: employeeId required")
	}
	return subject{EmployeeID: v.EmployeeID}, facts{Period: clean(v.Period, 16), Gross: etb(v.GrossSantim),
		Deductions: etb(v.DeductionsSantim), Net: etb(v.NetSantim), Reference: clean(v.EntryID, maxRef)}, nil
}

func parseKyc(p json.RawMessage) (subject, facts, error) {
	var v struct {
		SubmissionID string `json:"submissionId"`
		SubjectType  string `json:"subjectType"`
		SubjectID    string `json:"subjectId"`
		Note         string `json:"note"`
	}
	if err := json.Unmarshal(p, &v); err != nil || v.SubjectID == "" {
		return subject{}, facts{}, fmt.Errorf("notifications: kyc payload: subjectId required")
	}
	f := facts{Reference: clean(v.SubmissionID, maxRef), Note: clean(v.Note, 300)}
	switch v.SubjectType {
	case "EMPLOYEE":
		return subject{EmployeeID: v.SubjectID}, f, nil
	case "USER":
		return subject{UserID: v.SubjectID}, f, nil
	}
	return subject{}, facts{}, fmt.Errorf("notifications: kyc payload: unknown subjectType")
}

// parseDisputeOpened reads dispute.opened.v1: the dispute, its amount and the date it will be
// decided by (its SLA deadline, UTC). Its customer is told whoever raised it: the employee who did
// has it acknowledged with the date; one a partner bank or the platform raised learns that a
// transaction of theirs is disputed.
func parseDisputeOpened(p json.RawMessage) (subject, facts, error) {
	var v struct {
		DisputeID    string    `json:"disputeId"`
		AmountSantim int64     `json:"amountSantim"`
		SLADeadline  time.Time `json:"slaDeadline"`
	}
	if err := json.Unmarshal(p, &v); err != nil || v.DisputeID == "" || v.SLADeadline.IsZero() {
		return subject{}, facts{}, fmt.Errorf("notifications: dispute.opened payload: disputeId and slaDeadline required")
	}
	return subject{DisputeID: v.DisputeID}, facts{Amount: etb(v.AmountSantim), Reference: clean(v.DisputeID, maxRef),
		Date: v.SLADeadline.UTC().Format(time.DateOnly)}, nil
}

// parseDisputeDecided reads dispute.decided.v1: the dispute, its decision and amount. Who is told
// is the dispute's customer, found from the dispute itself when the message is written.
func parseDisputeDecided(p json.RawMessage) (subject, facts, error) {
	var v struct {
		DisputeID    string `json:"disputeId"`
		Decision     string `json:"decision"`
		AmountSantim int64  `json:"amountSantim"`
	}
	if err := json.Unmarshal(p, &v); err != nil || v.DisputeID == "" {
		return subject{}, facts{}, fmt.Errorf("notifications: dispute.decided payload: disputeId required")
	}
	if _, ok := disputeOutcomes[English][v.Decision]; !ok {
		return subject{}, facts{}, fmt.Errorf("notifications: dispute.decided payload: unknown decision")
	}
	return subject{DisputeID: v.DisputeID}, facts{Amount: etb(v.AmountSantim), Reference: clean(v.DisputeID, maxRef), Outcome: v.Decision}, nil
}

// disputeCustomerReached records on the dispute that its customer was told (customer_notified_at
// and a NOTIFIED dispute event, the first time only).
func disputeCustomerReached(ctx context.Context, tx pgx.Tx, e outbox.Event, who subject, channels []Channel, now time.Time) error {
	names := make([]string, len(channels))
	for i, ch := range channels {
		names[i] = string(ch)
	}
	_, err := disputes.RecordCustomerNotified(ctx, tx, who.DisputeID, e.ID, e.Type, names, now)
	return err
}
