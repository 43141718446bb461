package chart

import (
	"strings"
	"testing"
)

// The builders make names the chart accepts, with the type of their base.
func TestBuildersMakeChartNames(t *testing.T) {
	cases := []struct {
		name string
		want Type
	}{
		{PartnerBankAccount("cbe", "1000-funding"), Asset},
		{EmployeeReceivable("emp_42"), Asset},
		{EqubPoolAccount("tenant-1", "c7"), Liability},
		{FeeIncome, Income},
		{PayrollClearing, Asset},
	}
	for _, c := range cases {
		got, err := Parse(c.name)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if got := PartnerBankAccount("cbe", "1000"); got != "partner-bank:cbe:1000" {
		t.Errorf("PartnerBankAccount = %q", got)
	}
	if !strings.HasPrefix(PartnerBankAccount("cbe", "1000"), PartnerBankPrefix("cbe")) {
		t.Error("a mirror account's name does not start with its partner's prefix")
	}
}

// Every base of the chart has a valid type, and a base that needs no segments and no
// qualifier is itself a name of the chart.
func TestEntriesAreConsistent(t *testing.T) {
	for base, e := range Entries {
		if !e.Type.Valid() {
			t.Errorf("%s: type %q", base, e.Type)
		}
		if e.MinSegments > e.MaxSegments {
			t.Errorf("%s: %d..%d segments", base, e.MinSegments, e.MaxSegments)
		}
		if e.MinSegments == 0 && !e.Qualifier {
			if got, err := Parse(base); err != nil || got != e.Type {
				t.Errorf("Parse(%q) = %q, %v", base, got, err)
			}
		}
	}
	for _, bad := range []string{"", "cash", "partner-bank:cbe", "fee-income[x]", "payable-to-fi-partner", "partner-bank:cbe:a b"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestLoanAccountNamesParse(t *testing.T) {
	for name, want := range map[string]Type{
		BorrowerReceivable("loan_01J"):   Asset,
		FIPayable("org_fi1", "loan_01J"): Liability,
		LoanClearing("loan_01J"):         Asset,
	} {
		got, err := Parse(name)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
}
