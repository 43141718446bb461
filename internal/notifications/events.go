package notifications

import (
	"encoding/json"
	"fmt"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
)

// Message kinds (a template each).
const (
	kindEwaDisbursed  = "ewa_disbursed"
	kindLoanDisbursed = "loan_disbursed"
	kindPayslip       = "payslip"
	kindKycRequested  = "kyc_requested"
	kindKycApproved   = "kyc_approved"
	kindKycRejected   = "kyc_rejected"
	kindKycMoreInfo   = "kyc_more_info"
	kindKycExpired    = "kyc_expired"
)

// subscription is what the consumer does with one event type.
type subscription struct {
	kind     string
	category Category
	parse    func(json.RawMessage) (subject, facts, error)
}

// subject is who an event is about: an employee of the event's tenant, or a login user.
type subject struct {
	EmployeeID string
	UserID     string
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
	ewa.EventDisbursed:            {kindEwaDisbursed, CategoryEWA, parseEwa},
	lending.EventLoanDisbursed:    {kindLoanDisbursed, CategoryLoan, parseLoan},
	payroll.EventDeductionsTaken:  {kindPayslip, CategoryPayroll, parsePayslip},
	EventKycVerificationRequested: {kindKycRequested, CategoryKYC, parseKyc},
	EventKycApproved:              {kindKycApproved, CategoryKYC, parseKyc},
	EventKycRejected:              {kindKycRejected, CategoryKYC, parseKyc},
	EventKycMoreInfoRequested:     {kindKycMoreInfo, CategoryKYC, parseKyc},
	EventKycExpired:               {kindKycExpired, CategoryKYC, parseKyc},
}

// EventTypes are the event types the consumer takes, in a stable order.
func EventTypes() []string {
	return []string{ewa.EventDisbursed, lending.EventLoanDisbursed, payroll.EventDeductionsTaken,
		EventKycVerificationRequested, EventKycApproved, EventKycRejected, EventKycMoreInfoRequested, EventKycExpired}
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
