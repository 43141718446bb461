package payroll_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

var t0 = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

// checker runs fn in o's tenant as another user than the owner (the four-eyes approver).
func checker(o *payrolltest.Org, fn func(ctx context.Context, tx db.BunTx) error) error {
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: o.ID, Actor: "usr_checker-" + o.ID, RequestID: "req-checker"})
	return tenancy.InBunTx(ctx, o.Bun, func(tx db.BunTx) error { return fn(ctx, tx) })
}

// owned runs fn in o as its owner and returns its value.
func owned[T any](t *testing.T, o *payrolltest.Org, fn func(ctx context.Context, tx db.BunTx) (T, error)) (T, error) {
	t.Helper()
	var out T
	err := o.In(func(ctx context.Context, tx db.BunTx) (err error) { out, err = fn(ctx, tx); return err })
	return out, err
}

// checked is value as the checker.
func checked[T any](o *payrolltest.Org, fn func(ctx context.Context, tx db.BunTx) (T, error)) (T, error) {
	var out T
	err := checker(o, func(ctx context.Context, tx db.BunTx) (err error) { out, err = fn(ctx, tx); return err })
	return out, err
}

func requireField(t *testing.T, err error, name string) {
	t.Helper()
	var fe *field.Error
	require.ErrorAs(t, err, &fe, "%v", err)
	require.Equal(t, name, fe.Field)
}

func TestProtectionPolicyLifecycleAndEffectiveTerms(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o, other := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	create := func(num, den, minNet int64, from string) (payroll.ProtectionPolicy, error) {
		return owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionPolicy, error) {
			return payroll.CreateProtectionPolicy(ctx, tx, payroll.NewProtectionPolicy{ShareNumerator: num, ShareDenominator: den,
				MinimumNetSantim: minNet, EffectiveFrom: from}, t0)
		})
	}
	activate := func(id string) (payroll.ProtectionPolicy, error) {
		return checked(o, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionPolicy, error) {
			return payroll.ActivateProtectionPolicy(ctx, tx, id, t0)
		})
	}
	effective := func(period string) payroll.ProtectionTerms {
		t.Helper()
		terms, err := owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionTerms, error) {
			return payroll.EffectiveProtection(ctx, tx, period)
		})
		require.NoError(t, err)
		return terms
	}

	// Refused terms.
	for _, c := range []struct {
		num, den, minNet int64
		from, field      string
	}{
		{1, 0, 0, "2026-01", "voluntaryShareDenominator"}, {1, 10001, 0, "2026-01", "voluntaryShareDenominator"},
		{4, 3, 0, "2026-01", "voluntaryShareNumerator"}, {-1, 3, 0, "2026-01", "voluntaryShareNumerator"},
		{1, 3, -1, "2026-01", "minimumNetSantim"}, {1, 3, 1_000_000_000_001, "2026-01", "minimumNetSantim"},
		{1, 3, 0, "1999-12", "effectiveFrom"}, {1, 3, 0, "2101-01", "effectiveFrom"}, {1, 3, 0, "2026-13", "effectiveFrom"}, {1, 3, 0, "2026-1", "effectiveFrom"},
	} {
		_, err := create(c.num, c.den, c.minNet, c.from)
		requireField(t, err, c.field)
	}

	require.Equal(t, payroll.DefaultProtection, effective("2026-11"), "no policy: one third, no minimum")
	require.Equal(t, int64(1), payroll.DefaultProtection.ShareNumerator)
	require.Equal(t, int64(3), payroll.DefaultProtection.ShareDenominator)

	a, err := create(1, 4, 300_000, "2026-01")
	require.NoError(t, err)
	require.Equal(t, payroll.ProtectionDraft, a.Status)
	require.Equal(t, payroll.DefaultProtection, effective("2026-11"), "a draft applies to nothing")

	_, err = owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionPolicy, error) {
		return payroll.ActivateProtectionPolicy(ctx, tx, a.ID, t0)
	})
	requireRefusal(t, err, http.StatusForbidden, payroll.CodeSelfApproval)

	a, err = activate(a.ID)
	require.NoError(t, err)
	require.Equal(t, payroll.ProtectionActive, a.Status)
	require.Equal(t, payroll.ProtectionTerms{PolicyID: a.ID, ShareNumerator: 1, ShareDenominator: 4, MinimumNetSantim: 300_000}, effective("2026-11"))
	require.Equal(t, payroll.DefaultProtection, effective("2025-12"), "before its effectiveFrom")
	_, err = activate(a.ID)
	requireRefusal(t, err, http.StatusConflict, "PAYROLL_PROTECTION_POLICY_INVALID_STATE")

	// B from 2027-03 supersedes A; A still decides the periods before B's.
	b, err := create(1, 2, 0, "2027-03")
	require.NoError(t, err)
	b, err = activate(b.ID)
	require.NoError(t, err)
	a, err = owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionPolicy, error) {
		return payroll.GetProtectionPolicy(ctx, tx, a.ID)
	})
	require.NoError(t, err)
	require.Equal(t, payroll.ProtectionSuperseded, a.Status)
	require.Equal(t, b.ID, *a.SupersededBy)
	require.Equal(t, a.ID, effective("2027-02").PolicyID)
	require.Equal(t, b.ID, effective("2027-03").PolicyID)
	_, err = activate(a.ID)
	requireRefusal(t, err, http.StatusConflict, "PAYROLL_PROTECTION_POLICY_INVALID_STATE")

	// The database holds one ACTIVE policy per tenant whatever the code does.
	c, err := create(1, 3, 0, "2026-01")
	require.NoError(t, err)
	err = o.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.Exec(ctx, `UPDATE app.payroll_protection_policies SET status = 'ACTIVE', activated_by = 'usr_x', activated_at = now(), activation_seq = 99 WHERE id = $1`, c.ID)
		return err
	})
	require.ErrorContains(t, err, "payroll_protection_policies_active")
	// … and the four-eyes rule.
	err = o.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.Exec(ctx, `UPDATE app.payroll_protection_policies SET status = 'SUPERSEDED', superseded_by = 'x', superseded_at = now(),
			activated_by = created_by, activated_at = now(), activation_seq = 98 WHERE id = $1`, c.ID)
		return err
	})
	require.ErrorContains(t, err, "check")

	list, err := owned(t, o, func(ctx context.Context, tx db.BunTx) ([]payroll.ProtectionPolicy, error) {
		return payroll.ListProtectionPolicies(ctx, tx, payroll.ProtectionFilter{Status: payroll.ProtectionActive})
	})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, b.ID, list[0].ID)

	// Another tenant sees none of it.
	err = checker(other, func(ctx context.Context, tx db.BunTx) error {
		_, err := payroll.ActivateProtectionPolicy(ctx, tx, c.ID, t0)
		return err
	})
	requireRefusal(t, err, http.StatusNotFound, "PAYROLL_PROTECTION_POLICY_NOT_FOUND")
	terms, err := owned(t, other, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionTerms, error) {
		return payroll.EffectiveProtection(ctx, tx, "2027-03")
	})
	require.NoError(t, err)
	require.Equal(t, payroll.DefaultProtection, terms)

	require.Equal(t, 3, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'CreateProtectionPolicy'`))
	require.Equal(t, 2, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'ActivateProtectionPolicy'`))
	require.Equal(t, 2, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.protection_policy_activated.v1'`))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.protection_policy_activated.v1' AND payload->>'supersededPolicyId' = $1`, a.ID))
}

func TestAdjustmentLifecycleAndPeriodLines(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o, other := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	emp, emp2 := o.Employee(t, payrolltest.Employee{}), o.Employee(t, payrolltest.Employee{})
	create := func(a payroll.NewAdjustment) (payroll.Adjustment, error) {
		return owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
			return payroll.CreateAdjustment(ctx, tx, a, t0)
		})
	}
	as := func(move func(ctx context.Context, tx db.BunTx, id string, now time.Time) (payroll.Adjustment, error), id string) (payroll.Adjustment, error) {
		return checked(o, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) { return move(ctx, tx, id, t0) })
	}
	posted := func(a payroll.NewAdjustment) payroll.Adjustment {
		t.Helper()
		x, err := create(a)
		require.NoError(t, err)
		_, err = as(payroll.ApproveAdjustment, x.ID)
		require.NoError(t, err)
		x, err = as(payroll.ApplyAdjustment, x.ID)
		require.NoError(t, err)
		require.Equal(t, payroll.AdjustmentPosted, x.Status)
		return x
	}
	base := payroll.NewAdjustment{EmployeeID: emp, Period: "2026-11", Direction: payroll.Earning, AmountSantim: 50_000, Reason: "arrears for October"}

	for _, c := range []struct {
		change func(*payroll.NewAdjustment)
		field  string
	}{
		{func(a *payroll.NewAdjustment) { a.AmountSantim = 0 }, "amountSantim"},
		{func(a *payroll.NewAdjustment) { a.AmountSantim = 1_000_000_000_001 }, "amountSantim"},
		{func(a *payroll.NewAdjustment) { a.Direction = "REFUND" }, "direction"},
		{func(a *payroll.NewAdjustment) { a.Period = "2026-02-30" }, "period"},
		{func(a *payroll.NewAdjustment) { a.Reason = "  " }, "reason"},
		{func(a *payroll.NewAdjustment) { a.Reason = "a\x00b" }, "reason"},
		{func(a *payroll.NewAdjustment) { a.Reference = " x" }, "reference"},
		{func(a *payroll.NewAdjustment) { a.EmployeeID = "emp x" }, "employeeId"},
	} {
		a := base
		c.change(&a)
		_, err := create(a)
		requireField(t, err, c.field)
	}
	a := base
	a.EmployeeID = "emp_nobody"
	_, err := create(a)
	requireRefusal(t, err, http.StatusNotFound, payroll.CodeEmployeeNotFound)

	x, err := create(base)
	require.NoError(t, err)
	require.True(t, x.Taxable, "an earning is taxable by default")
	_, err = owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
		return payroll.ApproveAdjustment(ctx, tx, x.ID, t0)
	})
	requireRefusal(t, err, http.StatusForbidden, payroll.CodeSelfApproval)
	_, err = as(payroll.ApplyAdjustment, x.ID)
	requireRefusal(t, err, http.StatusConflict, "PAYROLL_ADJUSTMENT_INVALID_STATE")
	_, err = as(payroll.ApproveAdjustment, x.ID)
	require.NoError(t, err)
	_, err = as(payroll.ApproveAdjustment, x.ID)
	requireRefusal(t, err, http.StatusConflict, "PAYROLL_ADJUSTMENT_INVALID_STATE")
	x, err = owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
		return payroll.VoidAdjustment(ctx, tx, x.ID, "entered twice", t0)
	})
	require.NoError(t, err)
	require.Equal(t, payroll.AdjustmentVoided, x.Status)
	_, err = as(payroll.ApplyAdjustment, x.ID)
	requireRefusal(t, err, http.StatusConflict, "PAYROLL_ADJUSTMENT_INVALID_STATE")

	// Lines of 2026-11: a posted earning; a posted deduction reversed in 2026-12 (stays in 11,
	// opposite in 12); one reversed in its own period (drops out); another employee's.
	earning := posted(base)
	ded := base
	ded.Direction, ded.AmountSantim = payroll.Deduction, 7_000
	reversedLater := posted(ded)
	reversedNow := posted(base)
	other2 := base
	other2.EmployeeID = emp2
	theirs := posted(other2)
	reverse := func(id, period string) (payroll.Adjustment, error) {
		return checked(o, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
			return payroll.ReverseAdjustment(ctx, tx, id, "wrong month", period, t0)
		})
	}
	_, err = reverse(reversedLater.ID, "2026-10")
	requireField(t, err, "effectivePeriod")
	_, err = reverse(x.ID, "2026-12")
	requireRefusal(t, err, http.StatusConflict, "PAYROLL_ADJUSTMENT_INVALID_STATE")
	_, err = reverse(reversedLater.ID, "2026-12")
	require.NoError(t, err)
	_, err = reverse(reversedNow.ID, "2026-11")
	require.NoError(t, err)
	_, err = checked(o, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
		return payroll.VoidAdjustment(ctx, tx, reversedNow.ID, "", t0)
	})
	requireRefusal(t, err, http.StatusConflict, "PAYROLL_ADJUSTMENT_INVALID_STATE")

	nov, err := owned(t, o, func(ctx context.Context, tx db.BunTx) (map[string][]payroll.PeriodAdjustment, error) {
		return payroll.PostedAdjustmentsForPeriod(ctx, tx, "2026-11")
	})
	require.NoError(t, err)
	want := []payroll.PeriodAdjustment{
		{AdjustmentID: earning.ID, EmployeeID: emp, Direction: payroll.Earning, AmountSantim: 50_000, Taxable: true},
		{AdjustmentID: reversedLater.ID, EmployeeID: emp, Direction: payroll.Deduction, AmountSantim: 7_000, Taxable: false},
	}
	if want[0].AdjustmentID > want[1].AdjustmentID {
		want[0], want[1] = want[1], want[0]
	}
	require.Equal(t, map[string][]payroll.PeriodAdjustment{emp: want,
		emp2: {{AdjustmentID: theirs.ID, EmployeeID: emp2, Direction: payroll.Earning, AmountSantim: 50_000, Taxable: true}}}, nov)
	dec, err := owned(t, o, func(ctx context.Context, tx db.BunTx) ([]payroll.PeriodAdjustment, error) {
		return payroll.EmployeeAdjustmentsForPeriod(ctx, tx, emp, "2026-12")
	})
	require.NoError(t, err)
	require.Equal(t, []payroll.PeriodAdjustment{{AdjustmentID: reversedLater.ID, EmployeeID: emp, Direction: payroll.Earning,
		AmountSantim: 7_000, Taxable: false, Reversal: true}}, dec, "the deduction's reversal is a refund in December")
	require.Equal(t, reversedLater.ID+":reversal", dec[0].Reference())

	// Lists filter; another tenant's id is not found; a TERMINATED employee takes no new one.
	list, err := owned(t, o, func(ctx context.Context, tx db.BunTx) ([]payroll.Adjustment, error) {
		return payroll.ListAdjustments(ctx, tx, payroll.AdjustmentFilter{EmployeeID: emp, Status: payroll.AdjustmentReversed})
	})
	require.NoError(t, err)
	require.Len(t, list, 2)
	_, err = checked(other, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
		return payroll.GetAdjustment(ctx, tx, earning.ID)
	})
	requireRefusal(t, err, http.StatusNotFound, "PAYROLL_ADJUSTMENT_NOT_FOUND")
	_, err = owned(t, other, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
		return payroll.CreateAdjustment(ctx, tx, base, t0)
	})
	requireRefusal(t, err, http.StatusNotFound, payroll.CodeEmployeeNotFound)
	terminate(t, o, emp2)
	_, err = create(other2)
	requireRefusal(t, err, http.StatusUnprocessableEntity, payroll.CodeEmployeeTerminated)

	require.Equal(t, 5, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.adjustment_created.v1'`))
	require.Equal(t, 2, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'ReversePayrollAdjustment' AND outcome = 'SUCCESS'`))
	require.Equal(t, 2, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.adjustment_reversed.v1'`))
}

func TestMandateLifecycleAndPeriodMandates(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o, other := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	emp, emp2 := o.Employee(t, payrolltest.Employee{}), o.Employee(t, payrolltest.Employee{})
	n := func(v int64) *int64 { return &v }
	create := func(m payroll.NewMandate) (payroll.Mandate, error) {
		return owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
			return payroll.CreateMandate(ctx, tx, m, t0)
		})
	}
	activate := func(id string) (payroll.Mandate, error) {
		return checked(o, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
			return payroll.ActivateMandate(ctx, tx, id, t0)
		})
	}
	move := func(fn func(ctx context.Context, tx db.BunTx, id, reason string, now time.Time) (payroll.Mandate, error), id string) (payroll.Mandate, error) {
		return owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
			return fn(ctx, tx, id, "by request", t0)
		})
	}
	court := payroll.NewMandate{EmployeeID: emp, Kind: payroll.KindCourtOrder, AmountSantim: n(100_000), TotalSantim: n(1_200_000),
		StartPeriod: "2026-11", Priority: 1, Reference: "Civil file 123/2026",
		Payee: &payroll.Payee{Partner: "cbe", AccountNumber: "1000999", HolderName: "Almaz Tesfaye"}}

	for _, c := range []struct {
		change func(*payroll.NewMandate)
		field  string
	}{
		{func(m *payroll.NewMandate) { m.BasisPoints = n(500) }, "amountSantim"},
		{func(m *payroll.NewMandate) { m.AmountSantim = nil }, "amountSantim"},
		{func(m *payroll.NewMandate) { m.AmountSantim = n(0) }, "amountSantim"},
		{func(m *payroll.NewMandate) { m.AmountSantim, m.BasisPoints = nil, n(10_001) }, "basisPoints"},
		{func(m *payroll.NewMandate) { m.TotalSantim = n(0) }, "totalSantim"},
		{func(m *payroll.NewMandate) { m.Priority = 10_001 }, "priority"},
		{func(m *payroll.NewMandate) { m.Kind = "GARNISH" }, "kind"},
		{func(m *payroll.NewMandate) { m.EndPeriod = "2026-10" }, "endPeriod"},
		{func(m *payroll.NewMandate) { m.StartPeriod = "1999-12" }, "startPeriod"},
		{func(m *payroll.NewMandate) { m.Reference = "" }, "reference"},
		{func(m *payroll.NewMandate) { m.Payee = nil }, "payee"},
		{func(m *payroll.NewMandate) {
			m.Payee = &payroll.Payee{Partner: "cbe", AccountNumber: "10 00", HolderName: "A"}
		}, "payee.accountNumber"},
		{func(m *payroll.NewMandate) { m.Kind, m.Reference, m.Payee = payroll.KindLoanInstallment, "", nil }, "reference"},
	} {
		m := court
		c.change(&m)
		_, err := create(m)
		requireField(t, err, c.field)
	}

	cm, err := create(court)
	require.NoError(t, err)
	require.Equal(t, payroll.MandatePending, cm.Status)
	require.Equal(t, int64(1_200_000), *cm.RemainingSantim())
	_, err = owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
		return payroll.ActivateMandate(ctx, tx, cm.ID, t0)
	})
	requireRefusal(t, err, http.StatusForbidden, payroll.CodeSelfApproval)
	_, err = move(payroll.SuspendMandate, cm.ID)
	requireRefusal(t, err, http.StatusConflict, "PAYROLL_MANDATE_INVALID_STATE")
	cm, err = activate(cm.ID)
	require.NoError(t, err)
	require.Equal(t, payroll.MandateActive, cm.Status)

	union, err := create(payroll.NewMandate{EmployeeID: emp, Kind: payroll.KindUnionDues, BasisPoints: n(100), StartPeriod: "2026-01", EndPeriod: "2026-12"})
	require.NoError(t, err)
	_, err = activate(union.ID)
	require.NoError(t, err)
	loan, err := create(payroll.NewMandate{EmployeeID: emp, Kind: payroll.KindLoanInstallment, AmountSantim: n(20_000), StartPeriod: "2026-12", Reference: "loan_1"})
	require.NoError(t, err)
	_, err = activate(loan.ID)
	require.NoError(t, err)
	pending, err := create(payroll.NewMandate{EmployeeID: emp, Kind: payroll.KindOther, AmountSantim: n(1), StartPeriod: "2026-01"})
	require.NoError(t, err)
	theirs, err := create(payroll.NewMandate{EmployeeID: emp2, Kind: payroll.KindCostSharing, AmountSantim: n(5_000), StartPeriod: "2026-01"})
	require.NoError(t, err)
	_, err = activate(theirs.ID)
	require.NoError(t, err)
	// A mandate the runs have taken in full takes nothing more.
	full, err := create(payroll.NewMandate{EmployeeID: emp2, Kind: payroll.KindOther, AmountSantim: n(5), TotalSantim: n(10), StartPeriod: "2026-01"})
	require.NoError(t, err)
	_, err = activate(full.ID)
	require.NoError(t, err)
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.Exec(ctx, `UPDATE app.payroll_deduction_mandates SET taken_santim = 10 WHERE id = $1`, full.ID)
		return err
	}))

	ids := func(ms []payroll.PeriodMandate) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.MandateID)
		}
		return out
	}
	forPeriod := func(p string) map[string][]string {
		t.Helper()
		all, err := owned(t, o, func(ctx context.Context, tx db.BunTx) (map[string][]payroll.PeriodMandate, error) {
			return payroll.MandatesForPeriod(ctx, tx, p)
		})
		require.NoError(t, err)
		out := map[string][]string{}
		for e, ms := range all {
			out[e] = ids(ms)
		}
		return out
	}
	require.Equal(t, map[string][]string{emp: {cm.ID, union.ID}, emp2: {theirs.ID}}, forPeriod("2026-11"))
	require.Equal(t, map[string][]string{emp: {cm.ID, loan.ID, union.ID}, emp2: {theirs.ID}}, forPeriod("2026-12"), "court order, loan, union dues: the kinds' order")
	require.Equal(t, map[string][]string{emp: {cm.ID, loan.ID}, emp2: {theirs.ID}}, forPeriod("2027-01"), "union dues ended")
	require.Equal(t, map[string][]string{emp: {union.ID}, emp2: {theirs.ID}}, forPeriod("2026-10"), "the court order starts in November")
	_ = pending

	// Suspended: takes nothing; resumed: takes again; cancelled: for good.
	_, err = move(payroll.SuspendMandate, cm.ID)
	require.NoError(t, err)
	require.Equal(t, map[string][]string{emp: {loan.ID, union.ID}, emp2: {theirs.ID}}, forPeriod("2026-12"))
	_, err = move(payroll.SuspendMandate, cm.ID)
	requireRefusal(t, err, http.StatusConflict, "PAYROLL_MANDATE_INVALID_STATE")
	cm, err = move(payroll.ResumeMandate, cm.ID)
	require.NoError(t, err)
	require.Nil(t, cm.SuspendedAt)
	one, err := owned(t, o, func(ctx context.Context, tx db.BunTx) ([]payroll.PeriodMandate, error) {
		return payroll.EmployeeMandatesForPeriod(ctx, tx, emp, "2026-12")
	})
	require.NoError(t, err)
	require.Equal(t, []string{cm.ID, loan.ID, union.ID}, ids(one))
	_, err = move(payroll.CancelMandate, union.ID)
	require.NoError(t, err)
	_, err = move(payroll.ResumeMandate, union.ID)
	requireRefusal(t, err, http.StatusConflict, "PAYROLL_MANDATE_INVALID_STATE")
	_, err = move(payroll.CancelMandate, pending.ID)
	require.NoError(t, err, "a PENDING mandate can be cancelled")

	// Terminated: no new mandate, no activation or resumption.
	x, err := create(payroll.NewMandate{EmployeeID: emp, Kind: payroll.KindOther, AmountSantim: n(1), StartPeriod: "2026-01"})
	require.NoError(t, err)
	_, err = move(payroll.SuspendMandate, loan.ID)
	require.NoError(t, err)
	terminate(t, o, emp)
	_, err = create(payroll.NewMandate{EmployeeID: emp, Kind: payroll.KindOther, AmountSantim: n(1), StartPeriod: "2026-01"})
	requireRefusal(t, err, http.StatusUnprocessableEntity, payroll.CodeEmployeeTerminated)
	_, err = activate(x.ID)
	requireRefusal(t, err, http.StatusUnprocessableEntity, payroll.CodeEmployeeTerminated)
	_, err = move(payroll.ResumeMandate, loan.ID)
	requireRefusal(t, err, http.StatusUnprocessableEntity, payroll.CodeEmployeeTerminated)

	// Another tenant: 404.
	_, err = checked(other, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
		return payroll.ActivateMandate(ctx, tx, x.ID, t0)
	})
	requireRefusal(t, err, http.StatusNotFound, "PAYROLL_MANDATE_NOT_FOUND")
	got, err := owned(t, other, func(ctx context.Context, tx db.BunTx) (map[string][]payroll.PeriodMandate, error) {
		return payroll.MandatesForPeriod(ctx, tx, "2026-12")
	})
	require.NoError(t, err)
	require.Empty(t, got)

	// The database keeps the amount rule and the four eyes too.
	err = o.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.Exec(ctx, `UPDATE app.payroll_deduction_mandates SET basis_points = 5 WHERE id = $1`, x.ID)
		return err
	})
	require.ErrorContains(t, err, "check")
	err = o.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.Exec(ctx, `UPDATE app.payroll_deduction_mandates SET activated_by = created_by WHERE id = $1`, cm.ID)
		return err
	})
	require.ErrorContains(t, err, "check")

	require.Equal(t, 5, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'ActivateDeductionMandate'`))
	require.Equal(t, 5, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.deduction_mandate_activated.v1'`))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.deduction_mandate_resumed.v1'`))
}

// TestPeriodReadsFeedTheCalculator: what the period reads return, mapped with ForCalc and
// ProtectionTerms.Policy, is an Input the calculator accepts, and it applies each of them: the
// court order and the union dues, the adjustment lines, the policy's share.
func TestPeriodReadsFeedTheCalculator(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	emp := o.Employee(t, payrolltest.Employee{Salary: 2_000_000})
	n := func(v int64) *int64 { return &v }
	for _, m := range []payroll.NewMandate{
		{EmployeeID: emp, Kind: payroll.KindCourtOrder, AmountSantim: n(100_000), StartPeriod: "2026-11", Reference: "file 9",
			Payee: &payroll.Payee{Partner: "cbe", AccountNumber: "1", HolderName: "A B"}},
		{EmployeeID: emp, Kind: payroll.KindUnionDues, BasisPoints: n(100), StartPeriod: "2026-11", TotalSantim: n(15_000)},
	} {
		x, err := owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
			return payroll.CreateMandate(ctx, tx, m, t0)
		})
		require.NoError(t, err)
		_, err = checked(o, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
			return payroll.ActivateMandate(ctx, tx, x.ID, t0)
		})
		require.NoError(t, err)
	}
	adj, err := owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
		return payroll.CreateAdjustment(ctx, tx, payroll.NewAdjustment{EmployeeID: emp, Period: "2026-11", Direction: payroll.Earning,
			AmountSantim: 30_000, Reason: "arrears"}, t0)
	})
	require.NoError(t, err)
	for _, move := range []func(context.Context, db.BunTx, string, time.Time) (payroll.Adjustment, error){payroll.ApproveAdjustment, payroll.ApplyAdjustment} {
		_, err = checked(o, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) { return move(ctx, tx, adj.ID, t0) })
		require.NoError(t, err)
	}
	pol, err := owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionPolicy, error) {
		return payroll.CreateProtectionPolicy(ctx, tx, payroll.NewProtectionPolicy{ShareNumerator: 1, ShareDenominator: 4, EffectiveFrom: "2026-01"}, t0)
	})
	require.NoError(t, err)
	_, err = checked(o, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionPolicy, error) {
		return payroll.ActivateProtectionPolicy(ctx, tx, pol.ID, t0)
	})
	require.NoError(t, err)

	in := paycalc.Input{Period: "2026-11", MonthlySalarySantim: 2_000_000, HireDate: paycalc.Date{Year: 2026, Month: 1, Day: 1}}
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		ms, err := payroll.MandatesForPeriod(ctx, tx, "2026-11")
		if err != nil {
			return err
		}
		for _, m := range ms[emp] {
			in.Mandates = append(in.Mandates, m.ForCalc())
		}
		as, err := payroll.PostedAdjustmentsForPeriod(ctx, tx, "2026-11")
		if err != nil {
			return err
		}
		for _, a := range as[emp] {
			in.Adjustments = append(in.Adjustments, a.ForCalc())
		}
		terms, err := payroll.EffectiveProtection(ctx, tx, "2026-11")
		in.Policy = terms.Policy(paycalc.DefaultPolicy())
		return err
	}))
	require.Len(t, in.Mandates, 2)
	require.Equal(t, int64(15_000), *in.Mandates[1].RemainingSantim)

	// The loader reads the same, and so do the period reads in a pgx transaction.
	loaded := load(t, o, "2026-11", payroll.LoadOptions{})[emp]
	require.Equal(t, in.Mandates, loaded.Mandates)
	require.Equal(t, in.Adjustments, loaded.Adjustments)
	require.Equal(t, in.Policy, loaded.Policy)
	require.NoError(t, tenancy.InTx(o.Ctx, o.DB.App, func(tx pgx.Tx) error {
		ms, err := payroll.EmployeeMandatesForPeriod(o.Ctx, tx, emp, "2026-11")
		require.NoError(t, err)
		require.Len(t, ms, 2)
		require.Equal(t, in.Mandates[0], ms[0].ForCalc())
		as, err := payroll.EmployeeAdjustmentsForPeriod(o.Ctx, tx, emp, "2026-11")
		require.NoError(t, err)
		require.Equal(t, in.Adjustments, []paycalc.Adjustment{as[0].ForCalc()})
		terms, err := payroll.EffectiveProtection(o.Ctx, tx, "2026-11")
		require.NoError(t, err)
		require.Equal(t, pol.ID, terms.PolicyID)
		return nil
	}))

	entry, err := paycalc.Calculate(in)
	require.NoError(t, err)
	require.Equal(t, int64(2_030_000), entry.GrossSantim, "salary + the posted arrears")
	taken := map[paycalc.DeductionKind]int64{}
	for _, l := range entry.Deductions {
		taken[l.Kind] += l.AmountSantim
	}
	require.Equal(t, int64(100_000), taken[paycalc.KindCourtOrder])
	require.Equal(t, int64(15_000), taken[paycalc.KindUnionDues], "1% of gross is 20,300, capped at what is still owed")
	require.Equal(t, (entry.GrossSantim-entry.StatutorySantim)/4, entry.ShareCapSantim, "the policy's quarter, not the default third")
}

// TestConcurrentActivationsLeaveOneActivePolicy: policies activated at the same time by different
// requests end with exactly one ACTIVE, every other SUPERSEDED, and a strict activation order.
func TestConcurrentActivationsLeaveOneActivePolicy(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	const n = 6
	ids := make([]string, n)
	for i := range ids {
		p, err := owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionPolicy, error) {
			return payroll.CreateProtectionPolicy(ctx, tx, payroll.NewProtectionPolicy{ShareNumerator: 1, ShareDenominator: int64(2 + i), EffectiveFrom: "2026-01"}, t0)
		})
		require.NoError(t, err)
		ids[i] = p.ID
	}
	errs := make(chan error, n)
	for _, id := range ids {
		go func() {
			_, err := checked(o, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionPolicy, error) {
				return payroll.ActivateProtectionPolicy(ctx, tx, id, t0)
			})
			errs <- err
		}()
	}
	for range ids {
		require.NoError(t, <-errs)
	}
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.payroll_protection_policies WHERE status = 'ACTIVE'`))
	require.Equal(t, n-1, o.Count(t, `SELECT count(*) FROM app.payroll_protection_policies WHERE status = 'SUPERSEDED'`))
	require.Equal(t, n, o.Count(t, `SELECT count(DISTINCT activation_seq) FROM app.payroll_protection_policies WHERE activation_seq BETWEEN 1 AND $1`, n))
	var active string
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		return tx.QueryRow(ctx, `SELECT id FROM app.payroll_protection_policies WHERE status = 'ACTIVE' AND activation_seq = $1`, n).Scan(&active)
	}), "the ACTIVE policy is the one activated last")
	terms, err := owned(t, o, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionTerms, error) {
		return payroll.EffectiveProtection(ctx, tx, "2026-06")
	})
	require.NoError(t, err)
	require.Equal(t, active, terms.PolicyID)
}
