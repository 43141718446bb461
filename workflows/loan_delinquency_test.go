package workflows

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/lending"
)

// fakeLoanBook stands in for the loan's rows in the SDK test suite: the check runs the real
// rules (lending.Assess, lending.NextCheckAt, the default threshold) over instalments the test
// repays, and remembers what it recorded.
type fakeLoanBook struct {
	mu        sync.Mutex
	status    string
	ins       []lending.LoanInstalment
	bucket    string
	threshold int
	checks    []time.Time
	changes   []string // "<date> <bucket> <dpd>"
	defaulted []time.Time
}

func newFakeLoanBook(periods ...string) *fakeLoanBook {
	b := &fakeLoanBook{status: lending.LoanActive, bucket: lending.BucketCurrent, threshold: lending.DefaultAfterDays}
	for i, p := range periods {
		b.ins = append(b.ins, lending.LoanInstalment{Index: i, DuePeriod: p, PrincipalSantim: 10_000, TotalSantim: 10_000,
			Status: lending.InstalmentScheduled})
	}
	return b
}

func (b *fakeLoanBook) repay(idx ...int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, i := range idx {
		b.ins[i].Status, b.ins[i].RepaidSantim = lending.InstalmentRepaid, b.ins[i].TotalSantim
	}
}

func (b *fakeLoanBook) setStatus(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.status = s
}

func (b *fakeLoanBook) check(_ context.Context, in activities.LoanDelinquencyInput) (lending.DelinquencyCheck, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.checks = append(b.checks, in.At)
	out := lending.DelinquencyCheck{LoanID: in.LoanID, Status: b.status, DefaultAfterDays: b.threshold}
	if b.status == lending.LoanRepaid || b.status == lending.LoanWrittenOff {
		out.Final = true
		return out, nil
	}
	var err error
	if out.Delinquency, err = lending.Assess(b.ins, in.At); err != nil {
		return out, err
	}
	if out.NextCheckAt, err = lending.NextCheckAt(b.ins, in.At, b.threshold); err != nil {
		return out, err
	}
	out.PreviousBucket = b.bucket
	if out.Bucket != b.bucket {
		out.Changed, b.bucket = true, out.Bucket
		b.changes = append(b.changes, in.At.UTC().Format("2006-01-02")+" "+out.Bucket+" "+dpdText(out.DaysPastDue))
	}
	if b.status == lending.LoanActive && out.DaysPastDue > b.threshold {
		b.status, out.Status, out.Defaulted = lending.LoanDefaulted, lending.LoanDefaulted, true
		b.defaulted = append(b.defaulted, in.At)
	}
	return out, nil
}

func dpdText(n int) string { return strconv.Itoa(n) }

var delinquencyIn = LoanDelinquencyInput{TenantID: "t1", LoanID: "loan_1", CorrelationID: "http-req-9"}

func newDelinquencyEnv(t *testing.T, b *fakeLoanBook, start time.Time) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: LoanDelinquencyWorkflowID("t1", "loan_1")})
	env.SetStartTime(start)
	Register(env, Deps{})
	env.OnActivity(activities.LoanDelinquencyCheckActivity, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.LoanDelinquencyInput) (lending.DelinquencyCheck, error) {
			require.Equal(t, activities.Run{TenantID: "t1", WorkflowID: LoanDelinquencyWorkflowID("t1", "loan_1"), CorrelationID: "http-req-9"}, in.Run)
			require.Equal(t, "loan_1", in.LoanID)
			return b.check(ctx, in)
		})
	return env
}

func onDay(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// The watch wakes only at the instants the rules name — never daily — crosses every bucket of the
// earliest unpaid instalment (due 2027-01-31, past due from 2027-02-06 after the 5-day grace) and
// defaults the loan the day it is more than 90 days past due; repaid and closed, it ends.
func TestLoanDelinquencyCrossesBucketsAndDefaults(t *testing.T) {
	b := newFakeLoanBook("2027-01", "2027-02")
	env := newDelinquencyEnv(t, b, onDay("2027-01-15").Add(9*time.Hour))
	// Once defaulted, the borrower repays everything and the loan is REPAID (a nudge, as the
	// repayment saga sends it).
	env.RegisterDelayedCallback(func() {
		b.repay(0, 1)
		b.setStatus(lending.LoanRepaid)
		env.SignalWorkflow(LoanDelinquencyCheckSignal, nil)
	}, onDay("2027-06-01").Sub(onDay("2027-01-15").Add(9*time.Hour)))
	env.ExecuteWorkflow(LoanDelinquency, delinquencyIn)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res LoanDelinquencyResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, LoanDelinquencyResult{LoanID: "loan_1", Status: lending.LoanRepaid}, res)

	require.Equal(t, []string{
		"2027-02-06 DPD_1_30 1",   // instalment 0 past due (Jan 31 + 5 days' grace)
		"2027-03-08 DPD_31_60 31", // 30 days later
		"2027-04-07 DPD_61_90 61",
		"2027-05-07 DPD_90_PLUS 91",
	}, b.changes)
	require.Equal(t, []time.Time{onDay("2027-05-07")}, b.defaulted)
	// Every check was at a boundary (the start, a due date, a bucket edge, the threshold) or
	// nudged — 7 checks over four and a half months, not a daily poll.
	require.Equal(t, []time.Time{onDay("2027-01-15").Add(9 * time.Hour), onDay("2027-02-06"), onDay("2027-03-06"), onDay("2027-03-08"),
		onDay("2027-04-07"), onDay("2027-05-07"), onDay("2027-06-01")}, b.checks)
}

// A repayment brings the bucket back: the next timer-driven check records CURRENT.
func TestLoanDelinquencyRepaymentResets(t *testing.T) {
	b := newFakeLoanBook("2027-01", "2027-06")
	start := onDay("2027-01-20")
	env := newDelinquencyEnv(t, b, start)
	env.RegisterDelayedCallback(func() { b.repay(0) }, onDay("2027-02-20").Sub(start))
	// Closed later (written off, say) so the run ends.
	env.RegisterDelayedCallback(func() {
		b.setStatus(lending.LoanWrittenOff)
		env.SignalWorkflow(LoanDelinquencyCheckSignal, nil)
	}, onDay("2027-04-01").Sub(start))
	env.ExecuteWorkflow(LoanDelinquency, delinquencyIn)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"2027-02-06 DPD_1_30 1", "2027-03-08 CURRENT 0"}, b.changes)
	require.Empty(t, b.defaulted)
}

// A nudge checks at once; the timer is not lost for it.
func TestLoanDelinquencyNudge(t *testing.T) {
	b := newFakeLoanBook("2027-01")
	start := onDay("2027-01-20")
	env := newDelinquencyEnv(t, b, start)
	env.RegisterDelayedCallback(func() {
		b.repay(0)
		env.SignalWorkflow(LoanDelinquencyCheckSignal, nil)
	}, onDay("2027-02-10").Add(3*time.Hour).Sub(start))
	env.RegisterDelayedCallback(func() {
		b.setStatus(lending.LoanRepaid)
		env.SignalWorkflow(LoanDelinquencyCheckSignal, nil)
	}, onDay("2027-02-11").Sub(start))
	env.ExecuteWorkflow(LoanDelinquency, delinquencyIn)
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"2027-02-06 DPD_1_30 1", "2027-02-10 CURRENT 0"}, b.changes)
	require.Equal(t, []time.Time{start, onDay("2027-02-06"), onDay("2027-02-10").Add(3 * time.Hour), onDay("2027-02-11")}, b.checks)
}

// Its history stays bounded: after MaxDelinquencyChecks checks a run continues as new.
func TestLoanDelinquencyContinuesAsNew(t *testing.T) {
	b := newFakeLoanBook("2027-12")
	start := onDay("2027-01-01")
	env := newDelinquencyEnv(t, b, start)
	for i := 1; i <= MaxDelinquencyChecks+5; i++ {
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(LoanDelinquencyCheckSignal, nil) }, time.Duration(i)*time.Hour)
	}
	env.ExecuteWorkflow(LoanDelinquency, delinquencyIn)
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	require.True(t, workflow.IsContinueAsNewError(err), err)
	require.Len(t, b.checks, MaxDelinquencyChecks)
}

// The rules the watch sleeps on.
func TestLoanDelinquencyRules(t *testing.T) {
	due, err := lending.DueDate("2027-02")
	require.NoError(t, err)
	require.Equal(t, onDay("2027-02-28"), due)
	o, err := lending.OverdueAt("2027-02")
	require.NoError(t, err)
	require.Equal(t, onDay("2027-03-06"), o)
	require.Equal(t, 0, lending.DaysPastDue(o, o.Add(-time.Nanosecond)))
	require.Equal(t, 1, lending.DaysPastDue(o, o))
	require.Equal(t, 30, lending.DaysPastDue(o, o.Add(30*24*time.Hour-time.Nanosecond)))
	for dpd, want := range map[int]string{0: "CURRENT", 1: "DPD_1_30", 30: "DPD_1_30", 31: "DPD_31_60", 60: "DPD_31_60", 61: "DPD_61_90",
		90: "DPD_61_90", 91: "DPD_90_PLUS", 5000: "DPD_90_PLUS"} {
		require.Equal(t, want, lending.BucketOf(dpd), dpd)
	}
}
