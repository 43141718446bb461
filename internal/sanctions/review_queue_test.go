package sanctions_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// TestReviewBacklog: the sanctions work queue counts every tenant's checks awaiting a decision
// (a REVIEW or BLOCK nobody decided), not decided or CLEAR ones, and lists the oldest first, at
// most limit of them; a decision takes a check off it; it reads through its partial index.
func TestReviewBacklog(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := tenancy.WithActor(context.Background(), tenancy.System("sanctions-test"))
	insert := func(tenant, outcome string, decided bool, age string) string {
		t.Helper()
		id := "chk_" + testkit.Unique("q")
		require.NoError(t, db.InTenantTx(ctx, d.App, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO app.sanctions_checks (id, tenant_id, subject_type, subject_id, name_screened, outcome,
					score, evidence, list_versions, trigger, needs_review, review_decision, reviewed_by, reviewed_at, created_at)
				VALUES ($1, $2, 'EMPLOYEE', 'emp_' || $1, 'Girma Wolde', $3::text, 0.9, '[]', '{1}', 'SCREEN', $3::text <> 'CLEAR' AND NOT $4,
					CASE WHEN $4 THEN 'CONFIRMED' END, CASE WHEN $4 THEN 'usr_rev' END, CASE WHEN $4 THEN now() END, now() - $5::interval)`,
				id, tenant, outcome, decided, age)
			return err
		}))
		return id
	}
	var tenants []string
	for range 2 {
		id := orgs.NewOrganizationID()
		require.NoError(t, db.InTenantTx(ctx, d.App, id, func(tx pgx.Tx) error {
			_, _, err := orgs.Create(tenancy.WithTenant(ctx, id), tx, orgs.NewOrganization{ID: id, Name: "Sanctions Queue", Kind: orgs.Business}, "")
			return err
		}))
		tenants = append(tenants, id)
	}
	a, b := tenants[0], tenants[1]
	block := insert(b, "BLOCK", false, "6 hours")
	review := insert(a, "REVIEW", false, "2 hours")
	insert(a, "REVIEW", true, "8 hours")
	insert(b, "CLEAR", false, "9 hours")

	platform := d.Platform(t)
	read := func(limit int) sanctions.Backlog {
		t.Helper()
		var got sanctions.Backlog
		require.NoError(t, crosstenant.Tx(ctx, platform, "test", func(tx pgx.Tx) error {
			var err error
			got, err = sanctions.ReviewBacklog(ctx, tx, limit)
			return err
		}))
		return got
	}
	got := read(10)
	require.Equal(t, int64(2), got.Count)
	require.Len(t, got.Oldest, 2)
	require.Equal(t, [4]any{block, b, sanctions.Block, "emp_" + block},
		[4]any{got.Oldest[0].ID, got.Oldest[0].TenantID, got.Oldest[0].Outcome, got.Oldest[0].SubjectID})
	require.Equal(t, sanctions.SubjectEmployee, got.Oldest[0].SubjectType)
	require.InDelta(t, 6*3600, float64(got.Oldest[0].AgeSeconds), 60)
	require.Equal(t, [3]any{review, a, sanctions.Review}, [3]any{got.Oldest[1].ID, got.Oldest[1].TenantID, got.Oldest[1].Outcome})
	got = read(1)
	require.Equal(t, int64(2), got.Count, "the limit bounds the list, not the count")
	require.Len(t, got.Oldest, 1)

	require.NoError(t, crosstenant.Tx(ctx, platform, "test", func(tx pgx.Tx) error {
		for _, bad := range []int{0, sanctions.MaxBacklog + 1} {
			_, err := sanctions.ReviewBacklog(ctx, tx, bad)
			require.Error(t, err)
		}
		_, err := sanctions.ResolveReview(ctx, tx, block, sanctions.Confirmed, "usr_rev", "same person", time.Now())
		return err
	}))
	got = read(10)
	require.Equal(t, int64(1), got.Count)
	require.Equal(t, review, got.Oldest[0].ID)

	var plan string
	require.NoError(t, crosstenant.Tx(ctx, platform, "test", func(tx pgx.Tx) error {
		var err error
		plan, err = testkit.Plan(ctx, tx, sanctions.BacklogSQL, 10)
		return err
	}))
	require.Contains(t, plan, "sanctions_checks_review", plan)
	require.NotContains(t, plan, "Seq Scan", plan)
}
