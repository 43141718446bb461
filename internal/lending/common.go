package lending

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Stable codes of this package's refusals.
const (
	CodeProductNotFound       = "LOAN_PRODUCT_NOT_FOUND"        // 404
	CodeProductInvalidState   = "LOAN_PRODUCT_INVALID_STATE"    // 409: a RETIRED product is not changed
	CodeProductNameTaken      = "LOAN_PRODUCT_NAME_TAKEN"       // 409: another ACTIVE product of the FI has the name
	CodeProductRetired        = "LOAN_PRODUCT_RETIRED"          // 409: a RETIRED product is not opted in to or quoted
	CodeAlreadyOptedIn        = "LOAN_PRODUCT_ALREADY_OPTED_IN" // 409
	CodeOptInNotFound         = "LOAN_PRODUCT_OPT_IN_NOT_FOUND" // 404
	CodeOptInInvalidState     = "LOAN_PRODUCT_OPT_IN_INVALID_STATE"
	CodeNotOptedIn            = "LOAN_PRODUCT_NOT_OPTED_IN"   // 422
	CodeAmountOutOfRange      = "LOAN_AMOUNT_OUT_OF_RANGE"    // 422
	CodeTermOutOfRange        = "LOAN_TERM_OUT_OF_RANGE"      // 422
	CodeNotAffordable         = "LOAN_NOT_AFFORDABLE"         // 422
	CodeFIPartnerUnknown      = "LOAN_FI_PARTNER_UNKNOWN"     // 422
	CodeEmployeeNotActive     = "LOAN_EMPLOYEE_NOT_ACTIVE"    // 409
	CodeProjectionUnavailable = "LOAN_PROJECTION_UNAVAILABLE" // 422: the payroll cannot project the employee's pay
)

var (
	// ErrProductNotFound: no such product in the FI (for an FI), or none on offer or opted in to
	// (for a business).
	ErrProductNotFound = payroll.NotFound(CodeProductNotFound, "loan product")
	// ErrOptInNotFound: no such opt-in of the business.
	ErrOptInNotFound = payroll.NotFound(CodeOptInNotFound, "loan product opt-in")
	errNameTaken     = &payroll.Refusal{Code: CodeProductNameTaken, Status: http.StatusConflict,
		Message: "another ACTIVE product of this financial institution has this name"}
	errRetired = &payroll.Refusal{Code: CodeProductRetired, Status: http.StatusConflict,
		Message: "the loan product is RETIRED: it is no longer offered"}
	errAlreadyOptedIn = &payroll.Refusal{Code: CodeAlreadyOptedIn, Status: http.StatusConflict,
		Message: "the organization has already opted in to this loan product"}
	errNotOptedIn = &payroll.Refusal{Code: CodeNotOptedIn, Status: http.StatusUnprocessableEntity,
		Message: "the organization has not opted in to this loan product (POST /api/lending/product-opt-ins)"}
	errFIPartnerUnknown = &payroll.Refusal{Code: CodeFIPartnerUnknown, Status: http.StatusUnprocessableEntity,
		Message: "fiPartnerId names no financial institution that offers loan products to this organization"}
	errEmployeeNotActive = &payroll.Refusal{Code: CodeEmployeeNotActive, Status: http.StatusConflict,
		Message: "only an ACTIVE employee can be offered a loan"}
)

// fiAvailable refuses (LOAN_FI_NOT_AVAILABLE) a new loan, opt-in or approval, or a disbursement,
// with FI fiID unless the FI is in good standing.
func fiAvailable(ctx context.Context, tx db.Writer, fiID string) error {
	ok, err := orgs.PartnerInGoodStanding(ctx, tx, fiID)
	if errors.Is(err, orgs.ErrNotAPartner) {
		return RefusalError(CodeFINotAvailable)
	}
	if err != nil {
		return fmt.Errorf("lending: the FI's standing: %w", err)
	}
	if !ok {
		return RefusalError(CodeFINotAvailable)
	}
	return nil
}

// FIMayApprove reports whether fiID may take loans on now — the rule ApproveLoan applies before
// it approves (fiAvailable) — for a read that offers the approval (the FI's decision queue).
func FIMayApprove(ctx context.Context, tx db.Writer, fiID string) (bool, error) {
	err := fiAvailable(ctx, tx, fiID)
	switch {
	case err == nil:
		return true, nil
	case CodeOf(err) == CodeFINotAvailable:
		return false, nil
	}
	return false, err
}

func actor(ctx context.Context) string { return tenancy.From(ctx).Actor }

// record writes a change's audit row and its outbox event in tx.
func record(ctx context.Context, tx db.BunTx, action, targetType, targetID, event string, payload any) error {
	if err := audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: targetType,
		TargetID: targetID, Details: payload}); err != nil {
		return err
	}
	_, err := outbox.Write(ctx, tx, event, payload)
	return err
}

// uniqueViolation reports whether err is Postgres's unique violation of the named index.
func uniqueViolation(err error, index string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == index
}
