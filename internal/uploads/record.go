package uploads

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

const columns = `tenant_id, key, file_name, content_type, sniffed_type, size_bytes, sha256, uploaded_by, created_at`

// ErrInvalidObject: Record was given an Object Receive could not have returned.
var ErrInvalidObject = errors.New("uploads: invalid object")

// Record writes o's app.uploads row in q, a transaction scoped to o.TenantID (or the platform's
// cross-tenant one). Errors: ErrInvalidObject, ErrExists, ErrNotFound (no such tenant or user).
func Record(ctx context.Context, q db.Querier, o Object) error {
	if err := checkObject(o); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `INSERT INTO app.uploads (`+columns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		o.TenantID, o.Key, o.FileName, o.ContentType, o.SniffedType, o.SizeBytes, o.SHA256, o.UploadedBy, o.CreatedAt)
	switch {
	case db.IsCode(err, pgerrcode.UniqueViolation):
		return ErrExists
	case db.IsCode(err, pgerrcode.ForeignKeyViolation):
		return ErrNotFound
	case err != nil:
		return fmt.Errorf("uploads: record: %w", err)
	}
	return nil
}

func checkObject(o Object) error {
	bad := func(what string) error { return fmt.Errorf("%w: %s", ErrInvalidObject, what) }
	switch {
	case field.Identifier("tenantId", o.TenantID, 0) != nil:
		return bad("tenant")
	case !ValidKey(o.Key):
		return bad("key")
	case field.Name("fileName", o.FileName) != nil || len(o.FileName) > MaxFileName:
		return bad("file name")
	case !slices.Contains(AllowedTypes, o.ContentType):
		return bad("content type")
	case field.Text("sniffedType", o.SniffedType, 255) != nil || o.SniffedType == "":
		return bad("sniffed type")
	case o.SizeBytes <= 0:
		return bad("size")
	case !validSHA256(o.SHA256):
		return bad("sha256")
	case field.Identifier("uploadedBy", o.UploadedBy, 0) != nil:
		return bad("uploader")
	case o.CreatedAt.IsZero():
		return bad("time")
	}
	return nil
}

func validSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Lookup returns the upload (tenant, key) as q's transaction may see it: under RLS only its own
// tenant's, so another tenant's key is ErrNotFound like a key that never existed.
func Lookup(ctx context.Context, q db.Querier, tenant, key string) (Object, error) {
	if field.Identifier("tenantId", tenant, 0) != nil || !ValidKey(key) {
		return Object{}, ErrNotFound
	}
	var o Object
	err := q.QueryRow(ctx, `SELECT `+columns+` FROM app.uploads WHERE tenant_id = $1 AND key = $2`, tenant, key).Scan(
		&o.TenantID, &o.Key, &o.FileName, &o.ContentType, &o.SniffedType, &o.SizeBytes, &o.SHA256, &o.UploadedBy, &o.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Object{}, ErrNotFound
	}
	if err != nil {
		return Object{}, fmt.Errorf("uploads: lookup: %w", err)
	}
	return o, nil
}

// VerifyContent re-reads o's stored bytes and compares their size and SHA-256 with the recorded
// ones: ErrHashMismatch when they differ, ErrNotFound when the bytes are gone, another error when
// they cannot be read. Callers that trust a document because of its hash (KYC) must treat every
// error as a refusal.
func VerifyContent(ctx context.Context, store Store, o Object) error {
	rc, err := openRecorded(ctx, store, o)
	if err != nil {
		return err
	}
	defer rc.Close()
	return matches(ctx, rc, o)
}

// OpenVerified opens o's stored bytes for reading once VerifyContent's check has passed (its
// errors). When the store's reader can seek (the directory store's can), the bytes checked are
// the very bytes returned, from one open file; otherwise the object is opened a second time.
func OpenVerified(ctx context.Context, store Store, o Object) (io.ReadCloser, error) {
	rc, err := openRecorded(ctx, store, o)
	if err != nil {
		return nil, err
	}
	if err := matches(ctx, rc, o); err != nil {
		rc.Close()
		return nil, err
	}
	if rs, ok := rc.(io.Seeker); ok {
		if _, err := rs.Seek(0, io.SeekStart); err != nil {
			rc.Close()
			return nil, fmt.Errorf("uploads: rewind: %w", err)
		}
		return rc, nil
	}
	rc.Close()
	return openRecorded(ctx, store, o)
}

func openRecorded(ctx context.Context, store Store, o Object) (io.ReadCloser, error) {
	if !validSHA256(o.SHA256) {
		return nil, fmt.Errorf("%w: no recorded hash", ErrHashMismatch)
	}
	return store.Open(ctx, o.TenantID, o.Key)
}

// matches reads r to its end and compares it with o's size and hash.
func matches(ctx context.Context, r io.Reader, o Object) error {
	h := sha256.New()
	n, err := io.Copy(h, ctxReader{ctx: ctx, r: io.LimitReader(r, o.SizeBytes+1)})
	if err != nil {
		return fmt.Errorf("uploads: verify: %w", err)
	}
	if n != o.SizeBytes || hex.EncodeToString(h.Sum(nil)) != o.SHA256 {
		return ErrHashMismatch
	}
	return nil
}
