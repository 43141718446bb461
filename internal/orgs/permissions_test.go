package orgs

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFullIsTheKindsAllowlist(t *testing.T) {
	t.Parallel()
	full := Full(Business)
	require.Equal(t, Permissions{
		"payroll": {"view", "approve", "edit"}, "employees": {"view", "add", "edit", "delete"},
		"allowances": {"view", "edit"}, "deductions": {"view", "edit"}, "paye_tax": {"export"},
	}, full)
	require.True(t, full.Allows(Permission{"paye_tax", "export"}))
	require.False(t, full.Allows(Permission{"paye_tax", "view"}))
	// Lending is a financial institution's, BNPL a merchant's; neither grants the other's or a
	// business's modules.
	require.Equal(t, Permissions{"loans": {"view", "approve", "disburse", "edit"}}, Full(FI))
	require.Equal(t, Permissions{"bnpl": {"view", "approve", "collect", "cancel"}}, Full(Merchant))
	require.True(t, Full(FI).Allows(LoansDisburse))
	require.False(t, Full(FI).Allows(BnplView))
	require.False(t, Full(Merchant).Allows(LoansView))
	require.False(t, full.Allows(LoansView))
}

func TestUnionOfRoles(t *testing.T) {
	t.Parallel()
	u := Union(Permissions{"payroll": {"view"}}, Permissions{"payroll": {"approve", "view"}, "employees": {"add"}}, nil)
	require.Equal(t, Permissions{"payroll": {"approve", "view"}, "employees": {"add"}}, u)
	require.False(t, Union().Allows(Permission{"payroll", "view"}))
}

func TestDecodePermissions(t *testing.T) {
	t.Parallel()
	p, err := DecodePermissions([]byte(`{"payroll":["view","approve"],"employees":[]}`), Business)
	require.NoError(t, err)
	require.Equal(t, Permissions{"payroll": {"approve", "view"}}, p, "normalized: sorted, empty modules dropped")
	for _, bad := range []string{
		``, `null`, `[]`, `"x"`, `{"payroll":"view"}`, `{"payroll":[1]}`, `{"bank":["view"]}`,
		`{"payroll":["steal"]}`, `{"payroll":["view","view"]}`, `{"payroll":["view"]} x`,
	} {
		_, err := DecodePermissions([]byte(bad), Business)
		var pe *PermissionError
		require.ErrorAs(t, err, &pe, "%q", bad)
	}
	_, err = DecodePermissions([]byte(`{"payroll":["view"]}`), FI)
	require.ErrorContains(t, err, "not available to FI organizations")
	_, err = DecodePermissions([]byte(`{"loans":["view"]}`), Business)
	require.ErrorContains(t, err, "not available to BUSINESS organizations")
	_, err = DecodePermissions([]byte(`{"bnpl":["view"]}`), FI)
	require.ErrorContains(t, err, "not available to FI organizations")
	p, err = DecodePermissions([]byte(`{"loans":["disburse","view"]}`), FI)
	require.NoError(t, err)
	require.Equal(t, Permissions{"loans": {"disburse", "view"}}, p)
	p, err = DecodePermissions([]byte(`{"bnpl":["collect"]}`), Merchant)
	require.NoError(t, err)
	require.Equal(t, Permissions{"bnpl": {"collect"}}, p)
}

// FuzzDecodePermissions: whatever decodes is a subset of the kind's full grant, normalized, and
// survives a round trip unchanged; nothing panics.
func FuzzDecodePermissions(f *testing.F) {
	for _, s := range []string{`{"payroll":["view"]}`, `{}`, `{"employees":["add","delete"]}`, `{"x":[]}`, "\xff", `{"payroll":["view","view"]}`} {
		f.Add(s, "BUSINESS")
	}
	f.Fuzz(func(t *testing.T, raw, kind string) {
		p, err := DecodePermissions([]byte(raw), Kind(kind))
		if err != nil {
			return
		}
		full := Full(Kind(kind))
		for m, acts := range p {
			require.NotEmpty(t, acts)
			for _, a := range acts {
				require.True(t, full.Allows(Permission{m, a}), "%s.%s granted beyond %s", m, a, kind)
			}
		}
		b, err := json.Marshal(p)
		require.NoError(t, err)
		again, err := DecodePermissions(b, Kind(kind))
		require.NoError(t, err)
		require.Equal(t, p, again)
	})
}
