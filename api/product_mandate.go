package api

import (
	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// productMandateRequest is the body of a product's payroll-deduction opt-in (the equb
// contribution's, the BNPL instalment's; internal/payroll/product_mandate.go): the amount is
// the product's, never the caller's.
type productMandateRequest struct {
	StartPeriod *string `json:"startPeriod"`
	EndPeriod   *string `json:"endPeriod"`
}

// bindProductMandate reads an opt-in's body (unknown fields refused, startPeriod required,
// endPeriod left out or a month: the periods' own rules are the mandate's) and answers 400 when it
// is not one; end is "" when left out.
func bindProductMandate(c *gin.Context) (start, end string, ok bool) {
	var req productMandateRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return "", "", false
	}
	if err := pmRequired("startPeriod", req.StartPeriod == nil); err != nil {
		writeError(c, payrollError(err))
		return "", "", false
	}
	if req.EndPeriod != nil {
		if end = *req.EndPeriod; end == "" {
			writeError(c, fieldError(&field.Error{Field: "endPeriod", Problem: "must be a month written YYYY-MM (leave it out for none)"}))
			return "", "", false
		}
	}
	return *req.StartPeriod, end, true
}
