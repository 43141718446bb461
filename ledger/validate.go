package ledger

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// AddSantim adds two amounts, reporting overflow instead of wrapping.
func AddSantim(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}

// ValidatePosting checks a posting as a whole before anything is read or written: tenant and
// idempotency key present, at least two entries, each with one account reference, a direction
// and a positive amount, debits equal to credits with no overflow, a known status and, for
// adjustments, a complete approval record. What needs the database (the accounts exist, belong
// to the tenant and share one currency) is checked by the store.
//
// Errors: ErrMissingTenant, ErrMissingIdempotencyKey, ErrTooFewEntries, ErrInvalidAmount,
// ErrAmountOverflow, ErrUnbalanced, ErrInvalidAccountName, ErrInvalidArgument.
func ValidatePosting(p Posting) error {
	if err := validateTenant(p.TenantID); err != nil {
		return err
	}
	if err := validateKey(p.IdempotencyKey); err != nil {
		return err
	}
	switch p.Status {
	case Pending, Posted:
	default:
		return errorf(ReasonInvalidArgument, "status must be PENDING or POSTED, not %q", p.Status)
	}
	switch p.Kind {
	case Standard:
		if p.Adjustment != nil {
			return errorf(ReasonInvalidArgument, "adjustment details on a standard posting")
		}
	case AdjustmentKind:
		if p.Status != Posted {
			return errorf(ReasonInvalidArgument, "an adjustment is posted directly, never pending")
		}
		if err := validateAdjustment(p.Adjustment); err != nil {
			return err
		}
	default:
		return errorf(ReasonInvalidArgument, "kind must be STANDARD or ADJUSTMENT, not %q", p.Kind)
	}
	if len(p.Entries) < 2 {
		return errorf(ReasonTooFewEntries, "a transaction needs at least two entries, got %d", len(p.Entries))
	}
	if len(p.Entries) > MaxEntries {
		return errorf(ReasonInvalidArgument, "a transaction has at most %d entries, got %d", MaxEntries, len(p.Entries))
	}
	var debits, credits int64
	for i, e := range p.Entries {
		switch {
		case e.AccountID != "" && e.AccountName != "":
			return errorf(ReasonInvalidArgument, "entry %d: set account_id or account_name, not both", i)
		case e.AccountID != "":
			if _, err := uuid.Parse(e.AccountID); err != nil {
				return errorf(ReasonInvalidArgument, "entry %d: account_id %q is not a uuid", i, e.AccountID)
			}
		case e.AccountName != "":
			if _, err := ParseAccountName(e.AccountName); err != nil {
				return errorf(ReasonInvalidAccountName, "entry %d: %s", i, err.(*Error).Message)
			}
		default:
			return errorf(ReasonInvalidArgument, "entry %d: account_id or account_name is required", i)
		}
		if e.AmountSantim <= 0 {
			return errorf(ReasonInvalidAmount, "entry %d: amount must be a positive number of santim, got %d", i, e.AmountSantim)
		}
		var ok bool
		switch e.Direction {
		case Debit:
			debits, ok = AddSantim(debits, e.AmountSantim)
		case Credit:
			credits, ok = AddSantim(credits, e.AmountSantim)
		default:
			return errorf(ReasonInvalidArgument, "entry %d: direction must be DEBIT or CREDIT", i)
		}
		if !ok {
			return errorf(ReasonAmountOverflow, "entry %d: the total of the entries overflows int64 santim", i)
		}
	}
	if debits != credits {
		return errorf(ReasonUnbalanced, "debits %d santim differ from credits %d santim", debits, credits)
	}
	if err := validateMetadata(p.Metadata); err != nil {
		return err
	}
	return validateLineage(p.Lineage)
}

func validateTenant(t string) error {
	if strings.TrimSpace(t) == "" {
		return errorf(ReasonMissingTenant, "tenant_id is required")
	}
	if len(t) > 128 || !utf8.ValidString(t) {
		return errorf(ReasonInvalidArgument, "tenant_id must be at most 128 bytes of UTF-8")
	}
	return nil
}

func validateKey(k string) error {
	if strings.TrimSpace(k) == "" {
		return errorf(ReasonMissingIdempotencyKey, "idempotency_key is required")
	}
	if len(k) > 255 || !utf8.ValidString(k) {
		return errorf(ReasonInvalidArgument, "idempotency_key must be at most 255 bytes of UTF-8")
	}
	return nil
}

func validateAdjustment(a *Adjustment) error {
	if a == nil {
		return errorf(ReasonInvalidArgument, "adjustment details are required")
	}
	for _, f := range []struct{ name, v string }{
		{"adjustment source", a.Source}, {"adjustment reason", a.Reason},
		{"approved_by", a.ApprovedBy}, {"requested_by", a.RequestedBy},
	} {
		if strings.TrimSpace(f.v) == "" {
			return errorf(ReasonInvalidArgument, "%s is required", f.name)
		}
		if len(f.v) > 1024 || !utf8.ValidString(f.v) {
			return errorf(ReasonInvalidArgument, "%s must be at most 1024 bytes of UTF-8", f.name)
		}
	}
	if a.ApprovedBy == a.RequestedBy {
		return errorf(ReasonSelfApproved, "the approver must differ from the requester")
	}
	return nil
}

func validateMetadata(m map[string]string) error {
	size := 0
	for k, v := range m {
		if k == "" || !utf8.ValidString(k) || !utf8.ValidString(v) {
			return errorf(ReasonInvalidArgument, "metadata keys must be non-empty and keys and values UTF-8")
		}
		size += len(k) + len(v)
	}
	if size > maxMetadataBytes {
		return errorf(ReasonInvalidArgument, "metadata is larger than %d bytes", maxMetadataBytes)
	}
	return nil
}

func validateLineage(l Lineage) error {
	for _, v := range []string{l.WorkflowID, l.RunID, l.Step} {
		if len(v) > 1024 || !utf8.ValidString(v) {
			return errorf(ReasonInvalidArgument, "lineage fields must be at most 1024 bytes of UTF-8")
		}
	}
	return nil
}

// metadataJSON encodes metadata as a JSON object (never null).
func metadataJSON(m map[string]string) []byte {
	if m == nil {
		m = map[string]string{}
	}
	b, _ := json.Marshal(m) // map[string]string always encodes
	return b
}

// hasher builds the canonical content hash that tells an idempotent replay from a conflicting
// reuse of a key: length-prefixed fields, entries in a canonical order, metadata by key.
type hasher struct{ buf []byte }

func (h *hasher) str(s string) {
	h.buf = binary.AppendUvarint(h.buf, uint64(len(s)))
	h.buf = append(h.buf, s...)
}

func (h *hasher) int(v int64) { h.buf = binary.AppendVarint(h.buf, v) }

func (h *hasher) sum() []byte {
	s := sha256.Sum256(h.buf)
	return s[:]
}

// resolvedEntry is an entry whose account has been looked up.
type resolvedEntry struct {
	AccountID string
	Direction Direction
	Amount    int64
}

// postingHash is the content hash of a posting after account resolution. Lineage is not part
// of the content: a retried saga step may carry a new run id and is still the same posting.
func postingHash(p Posting, entries []resolvedEntry) []byte {
	h := &hasher{}
	h.str("posting/v1")
	h.str(string(p.Kind))
	h.str(string(p.Status))
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b resolvedEntry) int {
		if c := strings.Compare(a.AccountID, b.AccountID); c != 0 {
			return c
		}
		if c := strings.Compare(string(a.Direction), string(b.Direction)); c != 0 {
			return c
		}
		return cmp.Compare(a.Amount, b.Amount)
	})
	h.int(int64(len(sorted)))
	for _, e := range sorted {
		h.str(e.AccountID)
		h.str(string(e.Direction))
		h.int(e.Amount)
	}
	keys := make([]string, 0, len(p.Metadata))
	for k := range p.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h.int(int64(len(keys)))
	for _, k := range keys {
		h.str(k)
		h.str(p.Metadata[k])
	}
	if a := p.Adjustment; a != nil {
		h.str(a.Source)
		h.str(a.Reason)
		h.str(a.ApprovedBy)
		h.str(a.RequestedBy)
	}
	return h.sum()
}

// reversalHash is the content hash of a reversal request.
func reversalHash(originalID, reason string) []byte {
	h := &hasher{}
	h.str("reversal/v1")
	h.str(originalID)
	h.str(reason)
	return h.sum()
}
