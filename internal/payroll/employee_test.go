package payroll_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEmployeeStatusSeesOnlyTheTenantsLiveEmployees(t *testing.T) {
	d := testkit.NewDB(t)
	o, other := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	emp := o.Employee(t, payrolltest.Employee{})

	var status string
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) (err error) {
		status, err = payroll.EmployeeStatus(ctx, tx, emp)
		return err
	}))
	require.Equal(t, "ACTIVE", status)
	for _, c := range []struct {
		org *payrolltest.Org
		id  string
	}{{other, emp}, {o, "emp_nope"}, {o, "x' OR '1'='1"}} {
		err := c.org.In(func(ctx context.Context, tx db.BunTx) error {
			_, err := payroll.EmployeeStatus(ctx, tx, c.id)
			return err
		})
		require.ErrorIs(t, err, payroll.ErrEmployeeNotFound, "%s in %s", c.id, c.org.ID)
	}
}
