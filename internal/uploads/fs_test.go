package uploads_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/uploads"
)

func newFS(t *testing.T) (*uploads.FS, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "uploads")
	s, err := uploads.NewFS(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, dir
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestFSPutOpenDelete(t *testing.T) {
	t.Parallel()
	s, dir := newFS(t)
	ctx := t.Context()
	data := bytes.Repeat([]byte("wagerail "), 1000)
	key := uploads.NewKey()
	obj, err := s.Put(ctx, tenant, key, bytes.NewReader(data), int64(len(data)), "text/csv")
	require.NoError(t, err)
	require.Equal(t, uploads.Object{TenantID: tenant, Key: key, ContentType: "text/csv", SizeBytes: int64(len(data)), SHA256: sum(data)}, obj)

	// root/<tenant>/<key>, 0600 in a 0700 directory, nothing else left behind.
	require.Equal(t, []string{tenant, filepath.Join(tenant, key)}, entries(t, dir))
	fi, err := os.Stat(filepath.Join(dir, tenant, key))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	di, err := os.Stat(filepath.Join(dir, tenant))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), di.Mode().Perm())

	rc, err := s.Open(ctx, tenant, key)
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	require.Equal(t, data, got)

	// Keys are never reused.
	_, err = s.Put(ctx, tenant, key, strings.NewReader("other"), -1, "text/csv")
	require.ErrorIs(t, err, uploads.ErrExists)
	require.NoError(t, uploads.VerifyContent(ctx, s, obj), "the first bytes are still there")

	require.NoError(t, s.Delete(ctx, tenant, key))
	require.NoError(t, s.Delete(ctx, tenant, key), "deleting twice is fine")
	_, err = s.Open(ctx, tenant, key)
	require.ErrorIs(t, err, uploads.ErrNotFound)
}

// TestFSPutIsAllOrNothing: a reader that fails half-way, a size that does not match, or a
// cancelled context leave nothing under the root but the tenant's (empty) directory.
func TestFSPutIsAllOrNothing(t *testing.T) {
	t.Parallel()
	s, dir := newFS(t)
	boom := errors.New("client went away")
	half := io.MultiReader(strings.NewReader(strings.Repeat("x", 4096)), iotest.ErrReader(boom))
	_, err := s.Put(t.Context(), tenant, uploads.NewKey(), half, -1, "text/csv")
	require.ErrorIs(t, err, boom)

	_, err = s.Put(t.Context(), tenant, uploads.NewKey(), strings.NewReader("abc"), 4, "text/csv")
	require.ErrorIs(t, err, uploads.ErrSizeMismatch)

	ctx, cancel := contextWithCancel(t)
	cancel()
	_, err = s.Put(ctx, tenant, uploads.NewKey(), strings.NewReader("abc"), -1, "text/csv")
	require.Error(t, err)

	require.Equal(t, []string{tenant}, entries(t, dir), "no object and no temporary file")
}

// TestFSStaysUnderRoot: even a symbolic link planted where a tenant's directory would be (by
// something other than this store) does not lead a Put or an Open outside the root.
func TestFSStaysUnderRoot(t *testing.T) {
	t.Parallel()
	s, dir := newFS(t)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "org_planted")))
	key := uploads.NewKey()

	_, err := s.Put(t.Context(), "org_planted", key, strings.NewReader("data"), -1, "text/csv")
	require.Error(t, err)
	_, err = s.Open(t.Context(), "org_planted", key)
	require.Error(t, err)
	require.Equal(t, []string{"secret"}, entries(t, outside), "nothing was written outside the root")

	for _, tc := range [][2]string{{"..", key}, {tenant, ".."}, {"/etc", key}, {tenant, "/etc/passwd"}, {"a\x00", key}, {"../" + filepath.Base(outside), "secret"}} {
		_, err := s.Put(t.Context(), tc[0], tc[1], strings.NewReader("data"), -1, "text/csv")
		require.ErrorIs(t, err, uploads.ErrInvalidPath, "%q", tc)
		_, err = s.Open(t.Context(), tc[0], tc[1])
		require.ErrorIs(t, err, uploads.ErrInvalidPath, "%q", tc)
		require.ErrorIs(t, s.Delete(t.Context(), tc[0], tc[1]), uploads.ErrInvalidPath, "%q", tc)
	}
	require.Equal(t, []string{"secret"}, entries(t, outside))
}
