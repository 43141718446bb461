package orgs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

var fullProfile = orgs.BusinessProfile{
	LegalName: "Abyssinia Coffee PLC", TradeName: "Abyssinia Coffee", TIN: "0012345678", RegistrationNo: "MT/AA/1/0001/2024",
	Industry: "Coffee export", Address: "Bole, Addis Ababa", ContactEmail: "ops@abyssinia.example", ContactPhone: "+251911234567",
}

// inTenant runs fn as the runtime role scoped to tenant.
func inTenant(t *testing.T, d *testkit.DB, tenant string, fn func(pgx.Tx) error) error {
	t.Helper()
	return db.InTenantTx(context.Background(), d.App, tenant, fn)
}

func newBusiness(t *testing.T, d *testkit.DB, p orgs.BusinessProfile) orgs.BusinessOrg {
	t.Helper()
	id := orgs.NewOrganizationID()
	var b orgs.BusinessOrg
	require.NoError(t, inTenant(t, d, id, func(tx pgx.Tx) error {
		var err error
		b, err = orgs.CreateBusiness(context.Background(), tx, id, "Abyssinia", p)
		return err
	}))
	return b
}

func doc(key string) orgs.KYCDocument {
	return orgs.KYCDocument{FileKey: key, FileName: key + ".pdf", ContentType: "application/pdf", SizeBytes: 1234,
		UploadedAt: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), UploadedBy: "usr_1"}
}

func TestCreateBusinessAndProfile(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	b := newBusiness(t, d, orgs.BusinessProfile{TIN: "0012345678"})
	require.Equal(t, orgs.Business, b.Kind)
	require.Equal(t, orgs.OrgActive, b.Status)
	require.Equal(t, orgs.KYCPending, b.KYCStatus)
	require.Equal(t, "Abyssinia", b.Profile.LegalName, "the legal name defaults to the name")
	require.Equal(t, "0012345678", b.Profile.TIN)
	require.Empty(t, b.Profile.ContactEmail)
	require.Nil(t, b.DeletedAt)
	require.Nil(t, b.KYCReviewedAt)

	// The organization_admin role is seeded and nobody is a member yet.
	require.NoError(t, inTenant(t, d, b.ID, func(tx pgx.Tx) error {
		roles, err := orgs.Roles(ctx, tx, b.ID)
		require.NoError(t, err)
		require.Len(t, roles, 1)
		require.Equal(t, orgs.AdminRole, roles[0].Name)
		ms, err := orgs.ListMembers(ctx, tx, b.ID)
		require.NoError(t, err)
		require.Empty(t, ms)
		return nil
	}))

	// Update: name and profile together, under the row lock; "" clears a field.
	require.NoError(t, inTenant(t, d, b.ID, func(tx pgx.Tx) error {
		got, err := orgs.UpdateBusiness(ctx, tx, b.ID, func(x *orgs.BusinessOrg) error {
			x.Name = "Abyssinia Trading"
			x.Profile = fullProfile
			x.Profile.TradeName = ""
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, "Abyssinia Trading", got.Name)
		want := fullProfile
		want.TradeName = ""
		require.Equal(t, want, got.Profile)
		return nil
	}))

	// A change function's error rolls nothing in.
	boom := errors.New("boom")
	require.ErrorIs(t, inTenant(t, d, b.ID, func(tx pgx.Tx) error {
		_, err := orgs.UpdateBusiness(ctx, tx, b.ID, func(*orgs.BusinessOrg) error { return boom })
		return err
	}), boom)
}

func TestBusinessByIDIsKindAndTenantScoped(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	a := newBusiness(t, d, fullProfile)
	b := newBusiness(t, d, fullProfile)
	// As tenant b, a does not exist.
	require.NoError(t, inTenant(t, d, b.ID, func(tx pgx.Tx) error {
		_, err := orgs.BusinessByID(ctx, tx, a.ID)
		require.ErrorIs(t, err, orgs.ErrNotFound)
		_, err = orgs.UpdateBusiness(ctx, tx, a.ID, func(x *orgs.BusinessOrg) error { x.Name = "stolen"; return nil })
		require.ErrorIs(t, err, orgs.ErrNotFound)
		_, err = orgs.DeleteBusiness(ctx, tx, a.ID, time.Now())
		require.ErrorIs(t, err, orgs.ErrNotFound)
		_, err = orgs.PutDocument(ctx, tx, a.ID, orgs.Business, "owner_id", doc("k"))
		require.ErrorIs(t, err, orgs.ErrNotFound)
		list, err := orgs.ListBusinesses(ctx, tx, "", 100)
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, b.ID, list[0].ID)
		return nil
	}))
	// An FI is not a business.
	fi := orgs.NewOrganizationID()
	require.NoError(t, inTenant(t, d, fi, func(tx pgx.Tx) error {
		_, _, err := orgs.Create(ctx, tx, orgs.NewOrganization{ID: fi, Name: "Bank", Kind: orgs.FI}, "")
		require.NoError(t, err)
		_, err = orgs.BusinessByID(ctx, tx, fi)
		require.ErrorIs(t, err, orgs.ErrNotFound)
		_, err = orgs.OrganizationOfKind(ctx, tx, fi, orgs.Business)
		require.ErrorIs(t, err, orgs.ErrNotFound)
		o, err := orgs.OrganizationOfKind(ctx, tx, fi, orgs.FI)
		require.NoError(t, err)
		require.Equal(t, fi, o.ID)
		return nil
	}))
}

func TestBusinessLifecycle(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	b := newBusiness(t, d, fullProfile)
	run := func(fn func(tx pgx.Tx) (orgs.BusinessOrg, error)) (orgs.BusinessOrg, error) {
		var out orgs.BusinessOrg
		err := inTenant(t, d, b.ID, func(tx pgx.Tx) error {
			var err error
			out, err = fn(tx)
			return err
		})
		return out, err
	}
	got, err := run(func(tx pgx.Tx) (orgs.BusinessOrg, error) {
		return setBusinessStatus(ctx, tx, b.ID, orgs.OrgSuspended)
	})
	require.NoError(t, err)
	require.Equal(t, orgs.OrgSuspended, got.Status)
	_, err = run(func(tx pgx.Tx) (orgs.BusinessOrg, error) {
		return setBusinessStatus(ctx, tx, b.ID, orgs.OrgDeleted)
	})
	require.Error(t, err, "deleting goes through DeleteBusiness")

	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	got, err = run(func(tx pgx.Tx) (orgs.BusinessOrg, error) { return orgs.DeleteBusiness(ctx, tx, b.ID, at) })
	require.NoError(t, err)
	require.Equal(t, orgs.OrgDeleted, got.Status)
	require.NotNil(t, got.DeletedAt)
	require.True(t, at.Equal(*got.DeletedAt))
	require.Equal(t, fullProfile, got.Profile, "a soft delete keeps the data")

	_, err = run(func(tx pgx.Tx) (orgs.BusinessOrg, error) { return orgs.DeleteBusiness(ctx, tx, b.ID, at) })
	require.ErrorIs(t, err, orgs.ErrAlreadyDeleted)
	_, err = run(func(tx pgx.Tx) (orgs.BusinessOrg, error) {
		return setBusinessStatus(ctx, tx, b.ID, orgs.OrgActive)
	})
	require.ErrorIs(t, err, orgs.ErrDeleted, "deleting is final")
	_, err = run(func(tx pgx.Tx) (orgs.BusinessOrg, error) {
		return orgs.UpdateBusiness(ctx, tx, b.ID, func(x *orgs.BusinessOrg) error { x.Name = "x"; return nil })
	})
	require.ErrorIs(t, err, orgs.ErrDeleted)
	_, err = run(func(tx pgx.Tx) (orgs.BusinessOrg, error) {
		return reviewBusinessKYC(ctx, tx, b.ID, orgs.KYCReview{Status: orgs.KYCRejected, Reviewer: "u", At: at})
	})
	require.ErrorIs(t, err, orgs.ErrDeleted)
	require.NoError(t, inTenant(t, d, b.ID, func(tx pgx.Tx) error {
		_, err := orgs.PutDocument(ctx, tx, b.ID, orgs.Business, "owner_id", doc("k"))
		require.ErrorIs(t, err, orgs.ErrDeleted)
		_, err = orgs.DeleteDocument(ctx, tx, b.ID, orgs.Business, "owner_id")
		require.ErrorIs(t, err, orgs.ErrDeleted)
		// Still readable, and still listed for the platform.
		got, err := orgs.BusinessByID(ctx, tx, b.ID)
		require.NoError(t, err)
		require.Equal(t, orgs.OrgDeleted, got.Status)
		return nil
	}))

	// The database holds the pairing of status and deleted_at.
	require.Error(t, inTenant(t, d, b.ID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.organizations SET status = 'ACTIVE' WHERE id = $1`, b.ID)
		return err
	}))
}

func TestKYCDocumentsAndReview(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	b := newBusiness(t, d, fullProfile)
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	reviewer := createUser(t, d, b.ID, "reviewer@example.com")

	require.NoError(t, inTenant(t, d, b.ID, func(tx pgx.Tx) error {
		_, err := orgs.PutDocument(ctx, tx, b.ID, orgs.Business, "banking_license", doc("k"))
		require.ErrorIs(t, err, orgs.ErrUnknownDocumentType, "an FI's type is not a business's")
		_, err = orgs.PutDocument(ctx, tx, b.ID, orgs.FI, "banking_license", doc("k"))
		require.ErrorIs(t, err, orgs.ErrNotFound, "the organization is not an FI")
		_, err = orgs.DeleteDocument(ctx, tx, b.ID, orgs.Business, "owner_id")
		require.ErrorIs(t, err, orgs.ErrDocumentNotFound)
		require.ErrorIs(t, err, orgs.ErrNotFound)

		// Verifying needs every required document.
		_, err = reviewBusinessKYC(ctx, tx, b.ID, orgs.KYCReview{Status: orgs.KYCVerified, Reviewer: reviewer, At: at})
		var missing *orgs.MissingDocumentsError
		require.ErrorAs(t, err, &missing)
		require.ErrorIs(t, err, orgs.ErrDocumentsMissing)
		require.Equal(t, orgs.DocumentTypes(orgs.Business), missing.Types)

		for _, dt := range orgs.DocumentTypes(orgs.Business) {
			replaced, err := orgs.PutDocument(ctx, tx, b.ID, orgs.Business, dt, doc("first-"+dt))
			require.NoError(t, err)
			require.False(t, replaced)
		}
		replaced, err := orgs.PutDocument(ctx, tx, b.ID, orgs.Business, "owner_id", doc("second"))
		require.NoError(t, err)
		require.True(t, replaced)

		o, err := orgs.OrganizationOfKind(ctx, tx, b.ID, orgs.Business)
		require.NoError(t, err)
		docs, err := orgs.Documents(o)
		require.NoError(t, err)
		require.Equal(t, orgs.DocumentTypes(orgs.Business), orgs.SortedDocumentTypes(docs))
		require.Equal(t, doc("second"), docs["owner_id"])
		require.Empty(t, orgs.MissingDocuments(orgs.Business, o.KYCDocuments))

		got, err := reviewBusinessKYC(ctx, tx, b.ID, orgs.KYCReview{Status: orgs.KYCVerified, Note: "all good", Reviewer: reviewer, At: at})
		require.NoError(t, err)
		require.Equal(t, orgs.KYCVerified, got.KYCStatus)
		require.Equal(t, "all good", got.KYCNote)
		require.Equal(t, reviewer, got.KYCReviewedBy)
		require.True(t, at.Equal(*got.KYCReviewedAt))

		removed, err := orgs.DeleteDocument(ctx, tx, b.ID, orgs.Business, "owner_id")
		require.NoError(t, err)
		require.Equal(t, doc("second"), removed)
		o, err = orgs.ByID(ctx, tx, b.ID)
		require.NoError(t, err)
		require.Equal(t, []string{"owner_id"}, orgs.MissingDocuments(orgs.Business, o.KYCDocuments))

		_, err = reviewBusinessKYC(ctx, tx, b.ID, orgs.KYCReview{Status: orgs.KYCPending, Reviewer: reviewer, At: at})
		require.Error(t, err, "a review decides")
		got, err = reviewBusinessKYC(ctx, tx, b.ID, orgs.KYCReview{Status: orgs.KYCRejected, Reviewer: reviewer, At: at})
		require.NoError(t, err, "rejecting needs no documents")
		require.Equal(t, orgs.KYCRejected, got.KYCStatus)
		require.Empty(t, got.KYCNote)
		return nil
	}))
}

func TestDocumentTypesPerKind(t *testing.T) {
	t.Parallel()
	for _, k := range orgs.Kinds {
		types := orgs.DocumentTypes(k)
		require.NotEmpty(t, types, k)
		require.True(t, sort.StringsAreSorted(types), k)
		for _, dt := range types {
			require.True(t, orgs.ValidDocumentType(k, dt))
		}
		require.Equal(t, types, orgs.MissingDocuments(k, nil))
		types[0] = "mutated"
		require.NotEqual(t, "mutated", orgs.DocumentTypes(k)[0], "DocumentTypes returns a copy")
	}
	require.False(t, orgs.ValidDocumentType(orgs.Business, "banking_license"))
	require.False(t, orgs.ValidDocumentType(orgs.Merchant, ""))
	require.False(t, orgs.ValidDocumentType("NOPE", "owner_id"))
}

// createUser makes a user (in tenant's transaction, as sign-up does) and returns its id.
func createUser(t *testing.T, d *testkit.DB, tenant, email string) string {
	t.Helper()
	var id string
	require.NoError(t, inTenant(t, d, tenant, func(tx pgx.Tx) error {
		u, err := identity.CreateUser(context.Background(), tx, identity.NewUser{Email: email, Name: "Some One"})
		id = u.ID
		return err
	}))
	return id
}

func TestOnboardingProgress(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	b := newBusiness(t, d, orgs.BusinessProfile{TIN: "0012345678"})
	progress := func() orgs.Onboarding {
		var p orgs.Onboarding
		require.NoError(t, inTenant(t, d, b.ID, func(tx pgx.Tx) error {
			var err error
			p, err = orgs.BusinessOnboarding(ctx, tx, b.ID)
			return err
		}))
		return p
	}
	p := progress()
	require.Equal(t, 0, p.Percent)
	require.Equal(t, []orgs.OnboardingStep{
		{Key: orgs.StepProfile, Missing: []string{"registrationNumber", "industry", "address", "contactEmail", "contactPhone"}},
		{Key: orgs.StepDocuments, Missing: orgs.DocumentTypes(orgs.Business)},
		{Key: orgs.StepAdmin},
		{Key: orgs.StepKYC},
	}, p.Steps)

	require.NoError(t, inTenant(t, d, b.ID, func(tx pgx.Tx) error {
		_, err := orgs.UpdateBusiness(ctx, tx, b.ID, func(x *orgs.BusinessOrg) error { x.Profile = fullProfile; return nil })
		return err
	}))
	require.Equal(t, 25, progress().Percent)

	// An INVITED admin cannot act yet; an ACTIVE one can.
	admin := createUser(t, d, b.ID, "admin@example.com")
	var memberID string
	require.NoError(t, inTenant(t, d, b.ID, func(tx pgx.Tx) error {
		m, err := orgs.AddMember(ctx, tx, b.ID, orgs.NewMember{UserID: admin, Role: orgs.Admin, Status: orgs.Invited})
		memberID = m.ID
		return err
	}))
	require.False(t, progress().Steps[2].Done)
	require.NoError(t, inTenant(t, d, b.ID, func(tx pgx.Tx) error {
		_, err := orgs.UpdateMember(ctx, tx, b.ID, memberID, func(m *orgs.Member) error { m.Status = orgs.Active; return nil })
		return err
	}))
	require.Equal(t, 50, progress().Percent)

	require.NoError(t, inTenant(t, d, b.ID, func(tx pgx.Tx) error {
		for _, dt := range orgs.DocumentTypes(orgs.Business) {
			if _, err := orgs.PutDocument(ctx, tx, b.ID, orgs.Business, dt, doc(dt)); err != nil {
				return err
			}
		}
		return nil
	}))
	require.Equal(t, 75, progress().Percent)
	require.NoError(t, inTenant(t, d, b.ID, func(tx pgx.Tx) error {
		_, err := reviewBusinessKYC(ctx, tx, b.ID, orgs.KYCReview{Status: orgs.KYCVerified, Reviewer: admin, At: time.Now()})
		return err
	}))
	p = progress()
	require.Equal(t, 100, p.Percent)
	for _, s := range p.Steps {
		require.True(t, s.Done, s.Key)
		require.Empty(t, s.Missing, s.Key)
	}
}

func TestBusinessesForUserSeesOwnMembershipsOnly(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	a := newBusiness(t, d, fullProfile)
	b := newBusiness(t, d, fullProfile)
	gone := newBusiness(t, d, fullProfile)
	user := createUser(t, d, a.ID, "user@example.com")
	for _, id := range []string{a.ID, gone.ID} {
		require.NoError(t, inTenant(t, d, id, func(tx pgx.Tx) error {
			_, err := orgs.AddMember(ctx, tx, id, orgs.NewMember{UserID: user, Role: orgs.Admin})
			return err
		}))
	}
	// An FI membership is not a business.
	fi := orgs.NewOrganizationID()
	require.NoError(t, inTenant(t, d, fi, func(tx pgx.Tx) error {
		_, _, err := orgs.Create(ctx, tx, orgs.NewOrganization{ID: fi, Name: "Bank", Kind: orgs.FI}, user)
		return err
	}))
	require.NoError(t, inTenant(t, d, gone.ID, func(tx pgx.Tx) error {
		_, err := orgs.DeleteBusiness(ctx, tx, gone.ID, time.Now())
		return err
	}))
	uctx := tenancy.WithActor(ctx, user)
	require.NoError(t, tenancy.InUserTx(uctx, d.App, func(tx pgx.Tx) error {
		ms, err := orgs.BusinessesForUser(uctx, tx, user)
		require.NoError(t, err)
		require.Len(t, ms, 1, "not b (no membership), not the deleted one, not the FI")
		require.Equal(t, a.ID, ms[0].Business.ID)
		require.Equal(t, orgs.Admin, ms[0].Role)
		require.Equal(t, fullProfile, ms[0].Business.Profile)
		// The user's scope shows no other business at all.
		list, err := orgs.ListBusinesses(uctx, tx, "", 100)
		require.NoError(t, err)
		require.Len(t, list, 2, "a and the deleted one, where the user holds a membership row")
		for _, x := range list {
			require.NotEqual(t, b.ID, x.ID)
		}
		return nil
	}))
}

func TestListBusinessesAcrossTenantsPaginates(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := tenancy.WithActor(context.Background(), tenancy.System("test"))
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, newBusiness(t, d, fullProfile).ID)
	}
	sort.Strings(ids)
	// A platform admin's cross-tenant transaction creates and lists businesses of every tenant.
	pool := d.Platform(t)
	var created orgs.BusinessOrg
	require.NoError(t, crosstenant.Tx(ctx, pool, "test: onboard", func(tx pgx.Tx) error {
		var err error
		created, err = orgs.CreateBusiness(ctx, tx, orgs.NewOrganizationID(), "Platform made", orgs.BusinessProfile{})
		return err
	}))
	ids = append(ids, created.ID)
	sort.Strings(ids)
	var seen []string
	after := ""
	for page := 0; page < 10; page++ {
		var got []orgs.BusinessOrg
		require.NoError(t, crosstenant.Tx(ctx, pool, "test: list", func(tx pgx.Tx) error {
			var err error
			got, err = orgs.ListBusinesses(ctx, tx, after, 4)
			return err
		}))
		for _, b := range got {
			seen = append(seen, b.ID)
		}
		if len(got) < 4 {
			break
		}
		after = got[len(got)-1].ID
	}
	require.Equal(t, ids, seen)
}

func TestMissingDocumentsErrorNamesTypes(t *testing.T) {
	t.Parallel()
	err := error(&orgs.MissingDocumentsError{Types: []string{"owner_id", "tin_certificate"}})
	require.ErrorIs(t, err, orgs.ErrDocumentsMissing)
	require.Contains(t, err.Error(), "owner_id, tin_certificate")
	raw, _ := json.Marshal(doc("k"))
	require.JSONEq(t, fmt.Sprintf(`{"fileKey":"k","fileName":"k.pdf","contentType":"application/pdf","sizeBytes":1234,"uploadedAt":"2026-11-23T09:00:00Z","uploadedBy":%q}`, "usr_1"), string(raw))
}

// reviewBusinessKYC is orgs.ReviewKYC of a business, answered with its profile as the API does.
func reviewBusinessKYC(ctx context.Context, q db.Querier, id string, r orgs.KYCReview) (orgs.BusinessOrg, error) {
	if _, err := orgs.ReviewKYC(ctx, q, id, orgs.Business, r); err != nil {
		return orgs.BusinessOrg{}, err
	}
	return orgs.BusinessByID(ctx, q, id)
}

// setBusinessStatus is orgs.SetStatus of a business, answered with its profile.
func setBusinessStatus(ctx context.Context, q db.Querier, id, status string) (orgs.BusinessOrg, error) {
	if _, err := orgs.SetStatus(ctx, q, id, orgs.Business, status); err != nil {
		return orgs.BusinessOrg{}, err
	}
	return orgs.BusinessByID(ctx, q, id)
}
