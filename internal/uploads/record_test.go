package uploads_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/uploads"
)

// newTenant makes a user and an organization they own; it returns the tenant's context.
func newTenant(t *testing.T, d *testkit.DB, email string) (context.Context, identity.User) {
	t.Helper()
	ctx := context.Background()
	u, err := identity.CreateUser(ctx, d.App, identity.NewUser{Email: email, Name: "Abebe Kebede"})
	require.NoError(t, err)
	id := orgs.NewOrganizationID()
	tctx := tenancy.WithActor(tenancy.WithTenant(ctx, id), u.ID)
	require.NoError(t, tenancy.InTx(tctx, d.App, func(tx pgx.Tx) error {
		_, _, err := orgs.Create(tctx, tx, orgs.NewOrganization{ID: id, Name: "Org of " + email, Kind: orgs.Business}, u.ID)
		return err
	}))
	return tctx, u
}

func TestRecordLookupVerify(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	s, dir := newFS(t)
	ctxA, userA := newTenant(t, d, "a@example.com")
	ctxB, _ := newTenant(t, d, "b@example.com")
	tenantA, tenantB := tenancy.TenantID(ctxA), tenancy.TenantID(ctxB)

	obj, err := uploads.Receive(ctxA, s, uploads.Upload{TenantID: tenantA, UploadedBy: userA.ID, FileName: "id.pdf",
		DeclaredType: "application/pdf", Body: bytesReader(samplePDF), Now: now})
	require.NoError(t, err)
	require.NoError(t, tenancy.InTx(ctxA, d.App, func(tx pgx.Tx) error { return uploads.Record(ctxA, tx, obj) }))
	require.ErrorIs(t, tenancy.InTx(ctxA, d.App, func(tx pgx.Tx) error { return uploads.Record(ctxA, tx, obj) }), uploads.ErrExists)

	var got uploads.Object
	require.NoError(t, tenancy.InTx(ctxA, d.App, func(tx pgx.Tx) error {
		got, err = uploads.Lookup(ctxA, tx, tenantA, obj.Key)
		return err
	}))
	require.Equal(t, obj.SHA256, got.SHA256)
	require.Equal(t, obj.SizeBytes, got.SizeBytes)
	require.Equal(t, "application/pdf", got.ContentType)
	require.Equal(t, "application/pdf", got.SniffedType)
	require.Equal(t, "id.pdf", got.FileName)
	require.Equal(t, userA.ID, got.UploadedBy)
	require.True(t, now.Equal(got.CreatedAt))
	require.NoError(t, uploads.VerifyContent(ctxA, s, got))
	rc, err := uploads.OpenVerified(ctxA, s, got)
	require.NoError(t, err)
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	require.Equal(t, samplePDF, b, "the checked bytes, from the start")

	// Another tenant sees nothing, whether it asks for its own tenant or names A's.
	require.NoError(t, tenancy.InTx(ctxB, d.App, func(tx pgx.Tx) error {
		_, err := uploads.Lookup(ctxB, tx, tenantA, obj.Key)
		require.ErrorIs(t, err, uploads.ErrNotFound)
		_, err = uploads.Lookup(ctxB, tx, tenantB, obj.Key)
		require.ErrorIs(t, err, uploads.ErrNotFound)
		return nil
	}))
	// B cannot record a row for A, nor a row under its own tenant for a user that does not exist.
	forged := obj
	forged.Key = uploads.NewKey()
	require.Error(t, tenancy.InTx(ctxB, d.App, func(tx pgx.Tx) error { return uploads.Record(ctxB, tx, forged) }))
	forged.TenantID, forged.UploadedBy = tenantB, "usr_nobody"
	require.ErrorIs(t, tenancy.InTx(ctxB, d.App, func(tx pgx.Tx) error { return uploads.Record(ctxB, tx, forged) }), uploads.ErrNotFound)

	// The platform role sees it on the audited cross-tenant path.
	pctx := tenancy.WithActor(context.Background(), userA.ID)
	require.NoError(t, crosstenant.Tx(pctx, d.Platform(t), "test: platform lookup", func(tx pgx.Tx) error {
		_, err := uploads.Lookup(pctx, tx, tenantA, obj.Key)
		return err
	}))

	// The binding never moves: the runtime role may not change or delete the row.
	for _, stmt := range []string{`UPDATE app.uploads SET sha256 = repeat('0', 64)`, `DELETE FROM app.uploads`} {
		err := tenancy.InTx(ctxA, d.App, func(tx pgx.Tx) error { _, err := tx.Exec(ctxA, stmt); return err })
		require.Error(t, err, stmt)
	}

	// Tampering with the stored bytes is detected; so is a missing file.
	path := filepath.Join(dir, tenantA, obj.Key)
	tampered := append([]byte(nil), samplePDF...)
	tampered[len(tampered)-1] ^= 1
	require.NoError(t, os.WriteFile(path, tampered, 0o600))
	require.ErrorIs(t, uploads.VerifyContent(ctxA, s, got), uploads.ErrHashMismatch)
	_, err = uploads.OpenVerified(ctxA, s, got)
	require.ErrorIs(t, err, uploads.ErrHashMismatch)
	require.NoError(t, os.WriteFile(path, append(samplePDF, 'x'), 0o600))
	require.ErrorIs(t, uploads.VerifyContent(ctxA, s, got), uploads.ErrHashMismatch, "appended bytes")
	require.NoError(t, os.Remove(path))
	require.ErrorIs(t, uploads.VerifyContent(ctxA, s, got), uploads.ErrNotFound)
	noHash := got
	noHash.SHA256 = ""
	require.ErrorIs(t, uploads.VerifyContent(ctxA, s, noHash), uploads.ErrHashMismatch)
}

func TestRecordRefusesAnInvalidObject(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx, u := newTenant(t, d, "c@example.com")
	good := uploads.Object{TenantID: tenancy.TenantID(ctx), Key: uploads.NewKey(), FileName: "a.pdf", ContentType: "application/pdf",
		SniffedType: "application/pdf", SizeBytes: 3, SHA256: sum([]byte("abc")), UploadedBy: u.ID, CreatedAt: now}
	for name, change := range map[string]func(*uploads.Object){
		"key":       func(o *uploads.Object) { o.Key = "../x" },
		"tenant":    func(o *uploads.Object) { o.TenantID = "a/b" },
		"file name": func(o *uploads.Object) { o.FileName = "a\x00b" },
		"type":      func(o *uploads.Object) { o.ContentType = "text/html" },
		"size":      func(o *uploads.Object) { o.SizeBytes = 0 },
		"hash":      func(o *uploads.Object) { o.SHA256 = "ABC" },
		"time":      func(o *uploads.Object) { o.CreatedAt = time.Time{} },
	} {
		o := good
		change(&o)
		err := tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error { return uploads.Record(ctx, tx, o) })
		require.ErrorIs(t, err, uploads.ErrInvalidObject, name)
	}
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error { return uploads.Record(ctx, tx, good) }))
}
