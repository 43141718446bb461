package orgs_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestKYBReviewBacklog: the KYB work queue counts the organizations of every kind whose review is
// PENDING with documents on file — not those with none, nor verified, rejected or deleted ones —
// and lists the oldest first (since their earliest document), with the required documents still
// missing, at most limit of them; it reads through its partial index (migration app/0108).
func TestKYBReviewBacklog(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := tenancy.WithActor(context.Background(), tenancy.System("orgs-test"))
	platform := d.Platform(t)
	now := time.Now()
	in := func(fn func(tx pgx.Tx) error) {
		t.Helper()
		require.NoError(t, crosstenant.Tx(ctx, platform, "test", fn))
	}
	org := func(kind orgs.Kind, docs map[string]time.Duration) string {
		t.Helper()
		id := orgs.NewOrganizationID()
		in(func(tx pgx.Tx) error {
			var err error
			if kind == orgs.Business {
				_, err = orgs.CreateBusiness(ctx, tx, id, "Queue "+string(kind), orgs.BusinessProfile{})
			} else {
				_, _, err = orgs.Create(ctx, tx, orgs.NewOrganization{ID: id, Name: "Queue " + string(kind), Kind: kind}, "")
			}
			if err != nil {
				return err
			}
			for typ, age := range docs {
				if _, err := orgs.PutDocument(ctx, tx, id, kind, typ, orgs.KYCDocument{FileKey: "upl_" + typ, FileName: "scan.pdf",
					ContentType: "application/pdf", SizeBytes: 10, UploadedAt: now.Add(-age), UploadedBy: "usr_platform"}); err != nil {
					return err
				}
			}
			return nil
		})
		return id
	}
	fi := org(orgs.FI, map[string]time.Duration{"banking_license": 3 * time.Hour, "certificate_of_incorporation": 8 * time.Hour})
	merchant := org(orgs.Merchant, map[string]time.Duration{"owner_id": 5 * time.Hour, "tin_certificate": time.Hour, "trade_license": time.Hour})
	business := org(orgs.Business, map[string]time.Duration{"owner_id": 2 * time.Hour})
	org(orgs.Business, nil) // nothing filed yet
	verified := org(orgs.Merchant, map[string]time.Duration{"owner_id": 20 * time.Hour, "tin_certificate": 20 * time.Hour, "trade_license": 20 * time.Hour})
	rejected := org(orgs.Business, map[string]time.Duration{"owner_id": 30 * time.Hour})
	deleted := org(orgs.Business, map[string]time.Duration{"owner_id": 40 * time.Hour})
	in(func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.organizations SET kyc_status = CASE id WHEN $1 THEN 'VERIFIED' ELSE 'REJECTED' END
			WHERE id IN ($1, $2)`, verified, rejected)
		return err
	})
	in(func(tx pgx.Tx) error {
		_, err := orgs.DeleteBusiness(ctx, tx, deleted, now)
		return err
	})

	read := func(limit int) orgs.KYBBacklog {
		t.Helper()
		var got orgs.KYBBacklog
		in(func(tx pgx.Tx) error {
			var err error
			got, err = orgs.KYBReviewBacklog(ctx, tx, limit)
			return err
		})
		return got
	}
	got := read(10)
	require.Equal(t, int64(3), got.Count)
	require.Len(t, got.Oldest, 3)
	require.Equal(t, []string{fi, merchant, business}, []string{got.Oldest[0].ID, got.Oldest[1].ID, got.Oldest[2].ID}, "oldest first")
	require.Equal(t, orgs.FI, got.Oldest[0].Kind)
	require.WithinDuration(t, now.Add(-8*time.Hour), got.Oldest[0].Since, time.Second, "since its earliest document")
	require.InDelta(t, 8*3600, float64(got.Oldest[0].AgeSeconds), 60)
	require.Equal(t, []string{"director_id", "tin_certificate"}, got.Oldest[0].Missing)
	require.Equal(t, []string{}, got.Oldest[1].Missing, "every required document filed")
	require.Equal(t, []string{"business_license", "memorandum_of_association", "tin_certificate"}, got.Oldest[2].Missing)
	got = read(1)
	require.Equal(t, int64(3), got.Count, "the limit bounds the list, not the count")
	require.Equal(t, []string{fi}, []string{got.Oldest[0].ID})
	require.Len(t, got.Oldest, 1)
	in(func(tx pgx.Tx) error {
		for _, bad := range []int{0, orgs.MaxKYBBacklog + 1} {
			_, err := orgs.KYBReviewBacklog(ctx, tx, bad)
			require.Error(t, err)
		}
		return nil
	})

	var plan string
	in(func(tx pgx.Tx) error {
		var err error
		plan, err = testkit.Plan(ctx, tx, orgs.KYBBacklogSQL, 10)
		return err
	})
	require.Contains(t, plan, "organizations_kyb_pending", plan)
	require.NotContains(t, plan, "Seq Scan", plan)
}
