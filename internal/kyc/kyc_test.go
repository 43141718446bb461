package kyc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

type fixture struct {
	d      *testkit.DB
	tenant string
	ctx    context.Context
}

func newFixture(t *testing.T) *fixture {
	d := testkit.NewDB(t)
	f := &fixture{d: d, tenant: orgs.NewOrganizationID()}
	f.ctx = tenancy.With(context.Background(), tenancy.Scope{TenantID: f.tenant, Actor: tenancy.System("kyc-test")})
	require.NoError(t, tenancy.InTx(f.ctx, d.App, func(tx pgx.Tx) error {
		_, _, err := orgs.Create(f.ctx, tx, orgs.NewOrganization{ID: f.tenant, Name: "KYC Test", Kind: orgs.Business}, "")
		return err
	}))
	return f
}

func (f *fixture) submit(t *testing.T, subject string) kyc.Submission {
	var s kyc.Submission
	require.NoError(t, tenancy.InTx(f.ctx, f.d.App, func(tx pgx.Tx) error {
		var err error
		s, _, err = kyc.Submit(f.ctx, tx, f.tenant, kyc.NewSubmission{SubjectType: kyc.SubjectEmployee, SubjectID: subject,
			FullName: "Abebe Kebede", NationalID: "ETH-1234567", DateOfBirth: time.Date(1990, 1, 2, 0, 0, 0, 0, time.UTC),
			PhotoKey: "upl_photo", SubmittedBy: "user-1",
			Documents: []kyc.Document{{Type: "national_id", UploadKey: "upl_id", SHA256: strings.Repeat("ab", 32)}}})
		return err
	}))
	return s
}

// move runs one transition as the app role (tenant-scoped), returning its error.
func (f *fixture) move(t *testing.T, id string, a kyc.Action, ch kyc.Change) (kyc.Submission, error) {
	var s kyc.Submission
	err := tenancy.InTx(f.ctx, f.d.App, func(tx pgx.Tx) error {
		var err error
		s, err = kyc.Transition(f.ctx, tx, f.tenant, id, a, ch)
		return err
	})
	return s, err
}

func (f *fixture) count(t *testing.T, q string, args ...any) int {
	var n int
	require.NoError(t, tenancy.InTx(f.ctx, f.d.App, func(tx pgx.Tx) error { return tx.QueryRow(f.ctx, q, args...).Scan(&n) }))
	return n
}

func TestLifecycleWritesAuditAndEvents(t *testing.T) {
	f := newFixture(t)
	s := f.submit(t, "emp-1")
	require.Equal(t, kyc.Pending, s.Status)
	require.Len(t, s.Documents, 1)
	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'kyc.verification_requested.v1'`))

	rev := kyc.Change{Reviewer: "admin-1", Now: t0}
	_, err := f.move(t, s.ID, kyc.Approve, rev)
	require.ErrorIs(t, err, kyc.ErrInvalidTransition, "a decision needs a claim first")
	s, err = f.move(t, s.ID, kyc.Claim, rev)
	require.NoError(t, err)
	require.Equal(t, kyc.InReview, s.Status)
	_, err = f.move(t, s.ID, kyc.Approve, kyc.Change{Reviewer: "admin-2", Now: t0})
	require.ErrorIs(t, err, kyc.ErrClaimedByOther)
	s, err = f.move(t, s.ID, kyc.RequestMoreInfo, kyc.Change{Reviewer: "admin-1", Note: "the photo is blurred", Now: t0})
	require.NoError(t, err)
	require.Equal(t, kyc.Pending, s.Status)
	require.Equal(t, "the photo is blurred", s.RejectionReason)
	s, err = f.move(t, s.ID, kyc.Claim, kyc.Change{Reviewer: "admin-2", Now: t0})
	require.NoError(t, err)
	s, err = f.move(t, s.ID, kyc.Approve, kyc.Change{Reviewer: "admin-2", Now: t0, Validity: 30 * 24 * time.Hour})
	require.NoError(t, err)
	require.Equal(t, kyc.Approved, s.Status)
	require.Equal(t, t0.Add(30*24*time.Hour), s.ValidUntil.UTC())

	for _, e := range []string{"kyc.claimed.v1", "kyc.more_info_requested.v1", "kyc.approved.v1"} {
		require.GreaterOrEqual(t, f.count(t, `SELECT count(*) FROM app.outbox WHERE type = $1`, e), 1, e)
	}
	require.Equal(t, 5, f.count(t, `SELECT count(*) FROM app.audit_log WHERE target_id = $1`, s.ID),
		"submit, claim, more-info, claim, approve")

	// Terminal and illegal moves change nothing.
	for _, a := range []kyc.Action{kyc.Claim, kyc.Approve, kyc.Reject, kyc.RequestMoreInfo} {
		_, err := f.move(t, s.ID, a, kyc.Change{Reviewer: "admin-2", Note: "x", Now: t0})
		require.ErrorIs(t, err, kyc.ErrInvalidTransition, a)
	}
	_, err = f.move(t, "kyc_missing", kyc.Claim, rev)
	require.ErrorIs(t, err, kyc.ErrNotFound)
}

func TestRejectIsTerminalAndOneOpenSubmission(t *testing.T) {
	f := newFixture(t)
	s := f.submit(t, "emp-2")
	err := tenancy.InTx(f.ctx, f.d.App, func(tx pgx.Tx) error {
		_, _, err := kyc.Submit(f.ctx, tx, f.tenant, kyc.NewSubmission{SubjectType: kyc.SubjectEmployee, SubjectID: "emp-2",
			FullName: "X", NationalID: "1", DateOfBirth: t0, PhotoKey: "p", SubmittedBy: "u"})
		return err
	})
	require.ErrorIs(t, err, kyc.ErrOpenSubmission)
	_, err = f.move(t, s.ID, kyc.Claim, kyc.Change{Reviewer: "r", Now: t0})
	require.NoError(t, err)
	s, err = f.move(t, s.ID, kyc.Reject, kyc.Change{Reviewer: "r", Note: "document forged", Now: t0})
	require.NoError(t, err)
	require.Equal(t, kyc.Rejected, s.Status)
	_, err = f.move(t, s.ID, kyc.Claim, kyc.Change{Reviewer: "r", Now: t0})
	require.ErrorIs(t, err, kyc.ErrInvalidTransition)
	// After a decision the subject may submit again.
	f.submit(t, "emp-2")
}

func TestGateFailsClosed(t *testing.T) {
	f := newFixture(t)
	gate := func(subject string, now time.Time) error {
		return tenancy.InTx(f.ctx, f.d.App, func(tx pgx.Tx) error {
			return kyc.Gate(f.ctx, tx, f.tenant, kyc.SubjectEmployee, subject, now)
		})
	}
	require.ErrorIs(t, gate("nobody", t0), kyc.ErrNotApproved)
	s := f.submit(t, "emp-3")
	require.ErrorIs(t, gate("emp-3", t0), kyc.ErrNotApproved, "pending")
	_, err := f.move(t, s.ID, kyc.Claim, kyc.Change{Reviewer: "r", Now: t0})
	require.NoError(t, err)
	_, err = f.move(t, s.ID, kyc.Approve, kyc.Change{Reviewer: "r", Now: t0, Validity: time.Hour})
	require.NoError(t, err)
	require.NoError(t, gate("emp-3", t0.Add(59*time.Minute)))
	require.ErrorIs(t, gate("emp-3", t0.Add(time.Hour)), kyc.ErrExpired, "past validity even before the sweep runs")
	// Another tenant's approval does not count, and a database error is not a pass.
	other := tenancy.WithTenant(f.ctx, "org_other")
	require.ErrorIs(t, tenancy.InTx(other, f.d.App, func(tx pgx.Tx) error {
		return kyc.Gate(other, tx, "org_other", kyc.SubjectEmployee, "emp-3", t0)
	}), kyc.ErrNotApproved)
	canceled, cancel := context.WithCancel(f.ctx)
	cancel()
	require.Error(t, kyc.Gate(canceled, f.d.App, f.tenant, kyc.SubjectEmployee, "emp-3", t0), "an error is never a pass")
}

func TestExpirySweepAcrossTenants(t *testing.T) {
	f := newFixture(t)
	s := f.submit(t, "emp-4")
	_, err := f.move(t, s.ID, kyc.Claim, kyc.Change{Reviewer: "r", Now: t0})
	require.NoError(t, err)
	_, err = f.move(t, s.ID, kyc.Approve, kyc.Change{Reviewer: "r", Now: t0, Validity: time.Hour})
	require.NoError(t, err)
	platform := f.d.Platform(t)
	sweep := func(now time.Time) int {
		n := 0
		ctx := tenancy.WithActor(context.Background(), tenancy.System("kyc-expiry"))
		require.NoError(t, crosstenant.Tx(ctx, platform, "kyc expiry test", func(tx pgx.Tx) error {
			due, err := kyc.Due(ctx, tx, now, 10)
			for _, d := range due {
				if _, err := kyc.Transition(ctx, tx, d.TenantID, d.ID, kyc.Expire, kyc.Change{Reviewer: "system:kyc-expiry", Now: now}); err != nil {
					return err
				}
				n++
			}
			return err
		}))
		return n
	}
	require.Zero(t, sweep(t0.Add(59*time.Minute)))
	require.Equal(t, 1, sweep(t0.Add(time.Hour)))
	require.Zero(t, sweep(t0.Add(2*time.Hour)), "expired once")
	got, err := f.move(t, s.ID, kyc.Claim, kyc.Change{Reviewer: "r", Now: t0})
	require.ErrorIs(t, err, kyc.ErrInvalidTransition)
	require.Equal(t, kyc.Expired, got.Status)
	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'kyc.expired.v1'`))
}
