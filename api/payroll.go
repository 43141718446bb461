package api

import (
	"errors"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// The payroll routes' permissions (the spec's payroll module): view to read, edit to change an
// input, approve to approve or post one.
var (
	payrollView    = orgs.Permission{Module: "payroll", Action: "view"}
	payrollEdit    = orgs.Permission{Module: "payroll", Action: "edit"}
	payrollApprove = orgs.Permission{Module: "payroll", Action: "approve"}
)

// payrollError is how every payroll route answers a store's error: a refusal with its code and
// status, a field error as 400 INVALID_REQUEST; anything else is ours (500).
func payrollError(err error) error {
	var r *payroll.Refusal
	if errors.As(err, &r) {
		e := NewError(r.Status, r.Code, r.Message)
		if r.Details != nil {
			e.Details = r.Details
		}
		return e
	}
	var fe *field.Error
	if errors.As(err, &fe) {
		return fieldError(fe)
	}
	return err
}
