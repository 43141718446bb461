package orgs

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// A financial institution lends, and a merchant sells on BNPL, only in good standing: its KYB
// documents verified by the platform (PUT /api/financial-institutions/{id}/verify-kyc, the
// merchants' likewise) and the organization not SUSPENDED. Out of it, its products are not on
// offer and no new loan or agreement is made with it; what it already lent or sold is still
// serviced (collected, remitted, settled), since that money is owed either way.
//
// Every organization reads a partner's standing from app.partner_standing, which a trigger keeps
// equal to the organization's own row (migration 0082); the organization row itself stays its own.

// InGoodStanding is the SQL condition "organization <idExpr> is an FI or merchant in good
// standing", for a query's WHERE (idExpr is a column or a placeholder, never caller text).
func InGoodStanding(idExpr string) string {
	return `EXISTS (SELECT 1 FROM app.partner_standing ps WHERE ps.id = ` + idExpr +
		` AND ps.status = '` + OrgActive + `' AND ps.kyc_status = '` + KYCVerified + `')`
}

// ErrNotAPartner: the id names no FI or merchant.
var ErrNotAPartner = errors.New("orgs: no financial institution or merchant of this id")

// PartnerInGoodStanding reports whether FI or merchant id is in good standing (ErrNotAPartner
// when id names neither).
func PartnerInGoodStanding(ctx context.Context, q db.Writer, id string) (bool, error) {
	var status, kyc string
	err := q.QueryRow(ctx, `SELECT status, kyc_status FROM app.partner_standing WHERE id = $1`, id).Scan(&status, &kyc)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, ErrNotAPartner
	}
	if err != nil {
		return false, fmt.Errorf("orgs: partner standing: %w", err)
	}
	return status == OrgActive && kyc == KYCVerified, nil
}
