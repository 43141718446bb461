package idempotency

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestValidateKey(t *testing.T) {
	t.Parallel()
	var printable strings.Builder
	for c := byte(0x21); c <= 0x7e; c++ {
		printable.WriteByte(c)
	}
	for _, tc := range []struct {
		name, key string
		want      error
	}{
		{"uuid", "3f2b8c1e-6a5d-4e2f-9b7a-1c0d2e3f4a5b", nil},
		{"one byte", "k", nil},
		{"every printable byte", printable.String(), nil},
		{"255 bytes", strings.Repeat("k", 255), nil},
		{"empty", "", ErrKeyRequired},
		{"256 bytes", strings.Repeat("k", 256), ErrKeyInvalid},
		{"inner space", "a b", ErrKeyInvalid},
		{"leading space", " a", ErrKeyInvalid},
		{"tab", "a\tb", ErrKeyInvalid},
		{"newline", "a\nb", ErrKeyInvalid},
		{"nul", "a\x00b", ErrKeyInvalid},
		{"del", "a\x7fb", ErrKeyInvalid},
		{"utf-8", "clé", ErrKeyInvalid},
		{"invalid utf-8", "a\xffb", ErrKeyInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateKey(tc.key)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
		})
	}
	err := ValidateKey("SECRET-ORDER-42\x01")
	require.ErrorIs(t, err, ErrKeyInvalid)
	require.NotContains(t, err.Error(), "SECRET", "the message never echoes the key")
}

func TestRequestHashIsUnambiguous(t *testing.T) {
	t.Parallel()
	base := RequestHash("POST", "/api/x", []byte(`{"a":1}`))
	require.Equal(t, base, RequestHash("POST", "/api/x", []byte(`{"a":1}`)), "deterministic")
	for _, other := range []Hash{
		RequestHash("PUT", "/api/x", []byte(`{"a":1}`)),
		RequestHash("POST", "/api/y", []byte(`{"a":1}`)),
		RequestHash("POST", "/api/x?b=2", []byte(`{"a":1}`)),
		RequestHash("POST", "/api/x", []byte(`{"a":2}`)),
		RequestHash("POST", "/api/x", []byte(`{"a":1} `)),
		// Moving bytes between parts changes the hash.
		RequestHash("POST/", "api/x", []byte(`{"a":1}`)),
		RequestHash("POST", "/api/x{", []byte(`"a":1}`)),
	} {
		require.NotEqual(t, base, other)
	}
	require.NotEqual(t, RequestHash("POST", "/a", nil), RequestHash("POST", "/a", []byte{0}))
}

var workflowIDAlphabet = regexp.MustCompile(`^idem-[A-Za-z0-9_-]{0,32}-[a-z2-7]{52}$`)

func TestWorkflowID(t *testing.T) {
	t.Parallel()
	var printable strings.Builder
	for c := byte(0x21); c <= 0x7e; c++ {
		printable.WriteByte(c)
	}
	longKey := strings.Repeat("~", 255)
	longTenant := strings.Repeat("t", 128)
	longRoute := "POST " + strings.Repeat("/segment", 31)

	cases := [][3]string{
		{"tenant-a", "POST /api/ewa/requests", "k1"},
		{"tenant-a", "POST /api/ewa/requests", "k2"},
		{"tenant-b", "POST /api/ewa/requests", "k1"},
		{"tenant-a", "POST /api/loans", "k1"},
		{longTenant, longRoute, longKey},
		{longTenant, longRoute, longKey[:254]},
		{longTenant + "x", longRoute, longKey},
		{"tenant-a", "POST /api/x", printable.String()},
		{"", "", ""},
		{"t.with:odd*chars", "POST /api/x", "k"},
		// Separator games: plain concatenation would make these collide.
		{"a", "b-c", "d"},
		{"a-b", "c", "d"},
		{"a", "b", "c-d"},
		{"a", "bc", "d"},
		{"ab", "c", "d"},
		{"a", "b", "cd"},
		// Same readable tenant prefix (first 32 bytes), different tenants.
		{strings.Repeat("p", 32) + "1", "POST /x", "k"},
		{strings.Repeat("p", 32) + "2", "POST /x", "k"},
	}
	seen := map[string][3]string{}
	for _, c := range cases {
		id := WorkflowID(c[0], c[1], c[2])
		require.Equal(t, id, WorkflowID(c[0], c[1], c[2]), "deterministic")
		require.LessOrEqual(t, len(id), MaxWorkflowIDLen, "%q", c)
		require.LessOrEqual(t, MaxWorkflowIDLen, 100, "leaves room under the gateway's reference bound")
		require.Regexp(t, workflowIDAlphabet, id)
		require.NoError(t, field.Reference("reference", id, 128), "fits a partner reference")
		require.NoError(t, field.Identifier("workflow_id", id, 0))
		if prev, dup := seen[id]; dup {
			t.Fatalf("%q and %q share workflow id %s", prev, c, id)
		}
		seen[id] = c
	}
	require.Len(t, WorkflowID(longTenant, longRoute, longKey), MaxWorkflowIDLen, "the bound is reached, not exceeded")
	require.True(t, strings.HasPrefix(WorkflowID("acme-01", "POST /x", "k"), "idem-acme-01-"), "the tenant is readable")
}
