package orgs

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// Kind is an organization's kind.
type Kind string

const (
	Business  Kind = "BUSINESS"
	FI        Kind = "FI" // financial institution (lender)
	Merchant  Kind = "MERCHANT"
	AdminRole      = "organization_admin" // the full-permission role seeded in every organization
)

// Kinds lists the valid kinds.
var Kinds = []Kind{Business, FI, Merchant}

// ValidKind reports whether k is a known kind.
func ValidKind(k Kind) bool { return slices.Contains(Kinds, k) }

// catalog is every permission module and its actions: the spec's payroll modules, and the
// lending and BNPL modules that financial institutions and merchants guard their routes with
// (loans: read, approve a loan request, disburse it, edit its terms; bnpl: read agreements,
// approve, collect an installment, cancel before activation — restructuring is the platform
// operator's, not a module action).
var catalog = map[string][]string{
	"payroll":    {"view", "approve", "edit"},
	"employees":  {"view", "add", "edit", "delete"},
	"allowances": {"view", "edit"},
	"deductions": {"view", "edit"},
	"paye_tax":   {"export"},
	"loans":      {"view", "approve", "disburse", "edit"},
	"bnpl":       {"view", "approve", "collect", "cancel"},
}

// kindModules is the per-kind allowlist: which modules an organization of that kind may grant.
// Running a payroll is a business's; lending a financial institution's; BNPL a merchant's.
var kindModules = map[Kind][]string{
	Business: {"allowances", "deductions", "employees", "paye_tax", "payroll"},
	FI:       {"loans"},
	Merchant: {"bnpl"},
}

// Permissions routes can require of financial institutions and merchants (as a route table row's
// Permission).
var (
	LoansView     = Permission{Module: "loans", Action: "view"}
	LoansApprove  = Permission{Module: "loans", Action: "approve"}
	LoansDisburse = Permission{Module: "loans", Action: "disburse"}
	LoansEdit     = Permission{Module: "loans", Action: "edit"}
	BnplView      = Permission{Module: "bnpl", Action: "view"}
	BnplApprove   = Permission{Module: "bnpl", Action: "approve"}
	BnplCollect   = Permission{Module: "bnpl", Action: "collect"}
	BnplCancel    = Permission{Module: "bnpl", Action: "cancel"}
)

// Permission is one module.action pair a route can require.
type Permission struct{ Module, Action string }

func (p Permission) String() string { return p.Module + "." + p.Action }

// Permissions is a role's grant: module → actions. The zero value grants nothing.
type Permissions map[string][]string

// Allows reports whether p grants perm.
func (p Permissions) Allows(perm Permission) bool {
	return slices.Contains(p[perm.Module], perm.Action)
}

// Union merges grants (a member's roles combine by union).
func Union(ps ...Permissions) Permissions {
	out := Permissions{}
	for _, p := range ps {
		for m, acts := range p {
			for _, a := range acts {
				if !slices.Contains(out[m], a) {
					out[m] = append(out[m], a)
				}
			}
		}
	}
	for m := range out {
		sort.Strings(out[m])
	}
	return out
}

// Full is every permission an organization of kind may grant: organization_admin's map.
func Full(k Kind) Permissions {
	out := Permissions{}
	for _, m := range kindModules[k] {
		out[m] = slices.Clone(catalog[m])
	}
	return out
}

// PermissionError says what is wrong with a permission map; safe to show the caller.
type PermissionError struct{ Problem string }

func (e *PermissionError) Error() string { return "permissions " + e.Problem }

// maxPermissionBytes bounds a permission map before decoding: the full catalog is ~150 bytes.
const maxPermissionBytes = 4096

// DecodePermissions parses and validates a permission map for an organization of kind: a JSON
// object of known modules the kind allows, each a list of that module's actions, no duplicates.
// The result is normalized (sorted, empty modules dropped), so equal grants compare equal.
func DecodePermissions(raw []byte, k Kind) (Permissions, error) {
	if len(raw) > maxPermissionBytes {
		return nil, &PermissionError{"must be at most 4096 bytes"}
	}
	var m map[string][]string
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, &PermissionError{"must be an object of module to a list of actions"}
	}
	return CheckPermissions(Permissions(m), k)
}

// CheckPermissions validates an already decoded map (see DecodePermissions).
func CheckPermissions(p Permissions, k Kind) (Permissions, error) {
	allowed := kindModules[k]
	out := Permissions{}
	for mod, acts := range p {
		known, ok := catalog[mod]
		if !ok {
			return nil, &PermissionError{fmt.Sprintf("name an unknown module %q", clip(mod))}
		}
		if !slices.Contains(allowed, mod) {
			return nil, &PermissionError{fmt.Sprintf("module %q is not available to %s organizations", mod, k)}
		}
		seen := map[string]bool{}
		for _, a := range acts {
			if !slices.Contains(known, a) {
				return nil, &PermissionError{fmt.Sprintf("name an unknown action %q of module %q", clip(a), mod)}
			}
			if seen[a] {
				return nil, &PermissionError{fmt.Sprintf("repeat action %q of module %q", a, mod)}
			}
			seen[a] = true
		}
		if len(acts) > 0 {
			out[mod] = slices.Sorted(slices.Values(acts))
		}
	}
	return out, nil
}

// clip keeps an echoed unknown name short and printable.
func clip(s string) string {
	const n = 32
	r := []rune(s)
	if len(r) > n {
		r = r[:n]
	}
	for i, c := range r {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			r[i] = '?'
		}
	}
	return string(r)
}
