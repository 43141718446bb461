package uploads

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// Object is one stored upload: what its app.uploads row holds.
type Object struct {
	TenantID string
	Key      string
	// FileName is the client's file name as CleanFileName left it (shown back, never a path).
	FileName string
	// ContentType is the declared media type, one of AllowedTypes; SniffedType is what
	// http.DetectContentType made of the first bytes.
	ContentType string
	SniffedType string
	SizeBytes   int64
	// SHA256 is the lower-case hex SHA-256 of the stored bytes.
	SHA256     string
	UploadedBy string
	CreatedAt  time.Time
}

// Store keeps the bytes of uploads by (tenant, key). Implementations must refuse a tenant or key
// that ObjectPath refuses, whatever their backing store, and must never show a partial object.
type Store interface {
	// Put stores r's bytes under (tenant, key) atomically: when it returns an error nothing is
	// stored under the key. size is the exact length when the caller knows it, or -1. A read
	// error of r is returned wrapped (errors.Is finds it). The returned Object carries TenantID,
	// Key, ContentType, SizeBytes and SHA256.
	// Errors: ErrInvalidPath, ErrExists, ErrSizeMismatch, r's own.
	Put(ctx context.Context, tenant, key string, r io.Reader, size int64, contentType string) (Object, error)
	// Open reads the bytes stored under (tenant, key). Errors: ErrInvalidPath, ErrNotFound.
	Open(ctx context.Context, tenant, key string) (io.ReadCloser, error)
	// Delete removes them (a Put whose row could not be recorded); a missing object is not an
	// error. Errors: ErrInvalidPath.
	Delete(ctx context.Context, tenant, key string) error
}

// Errors of this package.
var (
	ErrNotFound = errors.New("uploads: not found")
	// ErrInvalidPath: a tenant id or key that must not reach a store (see ObjectPath).
	ErrInvalidPath = errors.New("uploads: invalid tenant or key")
	// ErrExists: Put under a key that already holds an object (keys are never reused).
	ErrExists = errors.New("uploads: key already stored")
	// ErrSizeMismatch: Put read a different number of bytes than the size it was given.
	ErrSizeMismatch = errors.New("uploads: size differs from the declared size")
	// ErrTooLarge: the file is over the size limit.
	ErrTooLarge = errors.New("uploads: file too large")
	// ErrEmpty: the file has no bytes.
	ErrEmpty = errors.New("uploads: file is empty")
	// ErrUnsupportedType: the declared media type is not one of AllowedTypes.
	ErrUnsupportedType = errors.New("uploads: unsupported media type")
	// ErrTypeMismatch: the bytes are not what the declared media type says.
	ErrTypeMismatch = errors.New("uploads: content does not match the declared media type")
	// ErrHashMismatch: the stored bytes no longer match the recorded size and SHA-256.
	ErrHashMismatch = errors.New("uploads: stored content does not match its recorded hash")
)

const keyPrefix = "upl_"

// NewKey mints an upload key: "upl_" and a version 7 UUID (time-ordered, so a tenant's keys sort
// roughly by upload time).
func NewKey() string { return keyPrefix + uuid.Must(uuid.NewV7()).String() }

// ValidKey reports whether k is a key NewKey could have minted: the prefix and a UUID in its
// canonical lower-case form, nothing else (so no dot, separator or NUL can be in it).
func ValidKey(k string) bool {
	rest, ok := strings.CutPrefix(k, keyPrefix)
	if !ok || len(rest) != 36 {
		return false
	}
	u, err := uuid.Parse(rest)
	return err == nil && u.String() == rest
}

// ObjectPath is where the object (tenant, key) lives under root: root/<tenant>/<key>. It refuses
// (ErrInvalidPath) anything that could name another place, although keys are minted by NewKey
// and tenant ids are checked at the edge: an empty, "." or ".." segment or one starting with a
// dot (temporary files are dot-files), a separator ('/' or '\'), a NUL, an absolute path, a
// tenant that is not a field.Identifier and a key that is not ValidKey. The joined path is then
// checked to be strictly under root.
func ObjectPath(root, tenant, key string) (string, error) {
	rel, err := objectName(tenant, key)
	if err != nil {
		return "", err
	}
	if root == "" || strings.IndexByte(root, 0) >= 0 {
		return "", ErrInvalidPath
	}
	base, err := filepath.Abs(root)
	if err != nil {
		return "", ErrInvalidPath
	}
	p := filepath.Join(base, filepath.FromSlash(rel))
	r, err := filepath.Rel(base, p)
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) ||
		r != filepath.FromSlash(rel) {
		return "", ErrInvalidPath
	}
	return p, nil
}

// objectName is the object's name relative to the store's root ("<tenant>/<key>"), after the
// checks ObjectPath documents.
func objectName(tenant, key string) (string, error) {
	if err := segment(tenant); err != nil {
		return "", err
	}
	if err := segment(key); err != nil {
		return "", err
	}
	if field.Identifier("tenantId", tenant, 0) != nil || !ValidKey(key) {
		return "", ErrInvalidPath
	}
	return tenant + "/" + key, nil
}

// segment refuses what must never be one path element, whatever the other checks allow.
func segment(s string) error {
	switch {
	case s == "", s == ".", s == "..", strings.HasPrefix(s, "."),
		strings.ContainsAny(s, "/\\\x00"), filepath.IsAbs(s), filepath.VolumeName(s) != "":
		return ErrInvalidPath
	}
	return nil
}
