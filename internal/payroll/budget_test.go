package payroll

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll/paycalc"
)

// TestBudgetGroup: every deduction kind the calculator writes has its group; what the employee
// chose is a commitment, what the employer deducts is the employer's.
func TestBudgetGroup(t *testing.T) {
	for kind, group := range map[paycalc.DeductionKind]string{
		paycalc.KindPAYE: GroupTax, paycalc.KindPension: GroupTax,
		paycalc.KindCourtOrder:      GroupCourtOrder,
		paycalc.KindLoanInstallment: GroupCommitment, paycalc.KindBnplInstallment: GroupCommitment,
		paycalc.KindEWARecovery: GroupCommitment, paycalc.KindEqubContribution: GroupCommitment,
		paycalc.KindSavingsAutosave: GroupCommitment,
		paycalc.KindUnionDues:       GroupEmployer, paycalc.KindCostSharing: GroupEmployer, paycalc.KindOther: GroupEmployer,
		paycalc.KindCatalog: GroupEmployer, paycalc.KindAdjustment: GroupEmployer,
	} {
		require.Equal(t, group, BudgetGroup(kind), kind)
	}
}
