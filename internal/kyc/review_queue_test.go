package kyc_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestReviewBacklog: the KYC work queue counts every tenant's submissions waiting for a reviewer
// (PENDING, IN_REVIEW), not the decided ones nor one sent back to its applicant, and lists the
// oldest first, at most limit of them; it reads through its partial index.
func TestReviewBacklog(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := tenancy.WithActor(context.Background(), tenancy.System("kyc-test"))
	insert := func(tenant, status, note, age string) string {
		t.Helper()
		id := "kyc_" + testkit.Unique("q")
		require.NoError(t, db.InTenantTx(ctx, d.App, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO app.kyc_submissions (id, tenant_id, subject_type, subject_id, full_name, national_id,
					date_of_birth, photo_key, status, rejection_reason, claimed_by, decided_by, decided_at, valid_until, submitted_by, created_at)
				VALUES ($1, $2, 'USER', 'usr_' || $1, 'Abebe Kebede', 'ET1234', '1990-01-02', 'upl_p', $3::text, NULLIF($4, ''),
					CASE WHEN $3::text <> 'PENDING' THEN 'usr_rev' END, CASE WHEN $3::text IN ('APPROVED', 'REJECTED') THEN 'usr_rev' END,
					CASE WHEN $3::text IN ('APPROVED', 'REJECTED') THEN now() END, CASE WHEN $3::text = 'APPROVED' THEN now() + interval '1 year' END,
					'usr_sub', now() - $5::interval)`, id, tenant, status, note, age)
			return err
		}))
		return id
	}
	var tenants []string
	for range 2 {
		id := orgs.NewOrganizationID()
		require.NoError(t, db.InTenantTx(ctx, d.App, id, func(tx pgx.Tx) error {
			_, _, err := orgs.Create(tenancy.WithTenant(ctx, id), tx, orgs.NewOrganization{ID: id, Name: "KYC Queue", Kind: orgs.Business}, "")
			return err
		}))
		tenants = append(tenants, id)
	}
	a, b := tenants[0], tenants[1]
	claimed := insert(b, "IN_REVIEW", "", "5 hours")
	pending := insert(a, "PENDING", "", "1 hour")
	insert(a, "PENDING", "a clearer photo, please", "9 hours")
	insert(a, "APPROVED", "", "10 hours")
	insert(b, "REJECTED", "not the employee", "11 hours")

	read := func(limit int) kyc.Backlog {
		t.Helper()
		var got kyc.Backlog
		require.NoError(t, crosstenant.Tx(ctx, d.Platform(t), "test", func(tx pgx.Tx) error {
			var err error
			got, err = kyc.ReviewBacklog(ctx, tx, limit)
			return err
		}))
		return got
	}
	got := read(10)
	require.Equal(t, int64(2), got.Count)
	require.Len(t, got.Oldest, 2)
	require.Equal(t, [4]any{claimed, b, kyc.InReview, "usr_rev"}, [4]any{got.Oldest[0].ID, got.Oldest[0].TenantID, got.Oldest[0].Status, got.Oldest[0].ClaimedBy})
	require.InDelta(t, 5*3600, float64(got.Oldest[0].AgeSeconds), 60)
	require.Equal(t, [4]any{pending, a, kyc.Pending, ""}, [4]any{got.Oldest[1].ID, got.Oldest[1].TenantID, got.Oldest[1].Status, got.Oldest[1].ClaimedBy})
	require.Equal(t, kyc.SubjectUser, got.Oldest[1].SubjectType)
	got = read(1)
	require.Equal(t, int64(2), got.Count, "the limit bounds the list, not the count")
	require.Equal(t, claimed, got.Oldest[0].ID)
	require.Len(t, got.Oldest, 1)
	for _, bad := range []int{0, -1, kyc.MaxBacklog + 1} {
		require.NoError(t, crosstenant.Tx(ctx, d.Platform(t), "test", func(tx pgx.Tx) error {
			_, err := kyc.ReviewBacklog(ctx, tx, bad)
			require.Error(t, err)
			return nil
		}))
	}

	// Sequential scans off: a read that no index serves shows as the scan it would be.
	var plan string
	require.NoError(t, crosstenant.Tx(ctx, d.Platform(t), "test", func(tx pgx.Tx) error {
		var err error
		plan, err = testkit.Plan(ctx, tx, kyc.BacklogSQL, 10)
		return err
	}))
	require.Contains(t, plan, "kyc_queue", plan)
	require.NotContains(t, plan, "Seq Scan", plan)
}
