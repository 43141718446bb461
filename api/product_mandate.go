package api

import (
	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// productMandatePeriods are the periods of a product's opt-in to payroll deduction (the equb
// contribution's, the BNPL instalment's, the savings auto-save's; internal/payroll/product_mandate.go):
// startPeriod required, endPeriod left out for none (an empty one is refused, never read as none).
// The equb and BNPL opt-ins' body is just these (the amount is the product's, never the caller's);
// the savings auto-save's embeds them beside the saver's amount.
type productMandatePeriods struct {
	StartPeriod *string `json:"startPeriod"`
	EndPeriod   *string `json:"endPeriod"`
}

// periods are the start and end ("" for none); the months themselves are checked by
// payroll.CreateProductMandate. Field errors are the caller's 400.
func (p productMandatePeriods) periods() (start, end string, e *Error) {
	if e := missingField(required{"startPeriod", p.StartPeriod != nil}); e != nil {
		return "", "", e
	}
	if p.EndPeriod != nil {
		if end = *p.EndPeriod; end == "" {
			return "", "", fieldError(&field.Error{Field: "endPeriod", Problem: "must be a month written YYYY-MM (leave it out for none)"})
		}
	}
	return *p.StartPeriod, end, nil
}

// bindProductMandate reads an opt-in whose body is only its periods (unknown fields refused) and
// answers 400 when it is not one; end is "" when left out.
func bindProductMandate(c *gin.Context) (start, end string, ok bool) {
	var req productMandatePeriods
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return "", "", false
	}
	start, end, e := req.periods()
	if e != nil {
		writeError(c, e)
		return "", "", false
	}
	return start, end, true
}
