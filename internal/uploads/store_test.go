package uploads_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/uploads"
)

const tenant = "org_0192f0c4-1f6a-7c3e-9a4b-2d5e6f708192"

func TestKeys(t *testing.T) {
	t.Parallel()
	k := uploads.NewKey()
	require.True(t, uploads.ValidKey(k), k)
	require.NotEqual(t, k, uploads.NewKey())
	for _, bad := range []string{"", "upl_", "upl_..", k + "x", strings.ToUpper(k), "UPL_" + k[4:], "x" + k[1:],
		"upl_" + strings.ReplaceAll(k[4:], "-", ""), k[:len(k)-1] + "/", k[:len(k)-1] + "\x00", "upl_{" + k[4:39] + "}"} {
		require.False(t, uploads.ValidKey(bad), "%q", bad)
	}
}

// TestObjectPath: a tenant or key that could name another place never becomes a path, and what
// is accepted is exactly root/<tenant>/<key>.
func TestObjectPath(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	key := uploads.NewKey()
	p, err := uploads.ObjectPath(root, tenant, key)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, tenant, key), p)

	for _, tc := range []struct{ tenant, key string }{
		{"", key}, {tenant, ""}, {".", key}, {"..", key}, {tenant, ".."}, {"../" + tenant, key}, {tenant, "../" + key},
		{"%2e%2e", key}, {tenant, "%2e%2e"}, {"..%2f..", key}, {"/etc", key}, {tenant, "/etc/passwd"}, {"/", key},
		{"a/b", key}, {`a\b`, key}, {tenant, key + "/x"}, {"a\x00", key}, {tenant, key + "\x00"}, {tenant + "\x00../x", key},
		{".hidden", key}, {"..tenant", key}, {"t", "." + key}, {"ten ant", key}, {tenant, "passwd"},
		{strings.Repeat("t", 200), key}, {"t", "upl_" + strings.Repeat("0", 36)},
	} {
		_, err := uploads.ObjectPath(root, tc.tenant, tc.key)
		require.ErrorIs(t, err, uploads.ErrInvalidPath, "%q %q", tc.tenant, tc.key)
	}
	_, err = uploads.ObjectPath("", tenant, key)
	require.ErrorIs(t, err, uploads.ErrInvalidPath)
}

// FuzzObjectPath: whatever ObjectPath accepts is a path exactly two elements below root, the
// first the tenant and the second the key, neither a dot-file; nothing else is accepted.
func FuzzObjectPath(f *testing.F) {
	key := uploads.NewKey()
	for _, s := range [][2]string{{tenant, key}, {"..", key}, {tenant, ".."}, {"%2e%2e", key}, {"/etc", "passwd"},
		{"a\x00", key}, {"t", "upl_../../x"}, {"a/b", key}, {"t.x", key}} {
		f.Add(s[0], s[1])
	}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, tn, k string) {
		p, err := uploads.ObjectPath(root, tn, k)
		if err != nil {
			require.ErrorIs(t, err, uploads.ErrInvalidPath)
			return
		}
		rel, err := filepath.Rel(root, p)
		require.NoError(t, err)
		parts := strings.Split(rel, string(filepath.Separator))
		require.Equal(t, []string{tn, k}, parts, "accepted %q %q as %q", tn, k, p)
		require.True(t, uploads.ValidKey(k))
		require.False(t, strings.HasPrefix(tn, "."))
		require.Equal(t, filepath.Clean(p), p)
		require.True(t, strings.HasPrefix(p, root+string(filepath.Separator)))
		// The FS store accepts exactly the same names.
		s, err := uploads.NewFS(filepath.Join(root, "fs"))
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, s.Delete(t.Context(), tn, k))
		_, err = s.Open(t.Context(), tn, k)
		require.ErrorIs(t, err, uploads.ErrNotFound)
	})
}

// entries lists every file and directory under dir, relative to it.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	}))
	return out
}

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}
