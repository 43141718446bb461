package ledger

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// ValidatePosting checks a posting as a whole before anything is read or written: tenant and
// idempotency key present and well formed, at least two entries, each with one account
// reference, a direction and an amount in (0, money.MaxAmountSantim], debits equal to credits
// and at most money.MaxTransactionSantim, more than one account, a known status, metadata and
// lineage of printable text and, for adjustments, a complete approval record. What needs the
// database (the accounts exist, belong to the tenant and share one currency, an id and a name
// are not the same account, the accounts' totals stay in range) is checked by the store and
// the database.
//
// Errors: ErrMissingTenant, ErrMissingIdempotencyKey, ErrTooFewEntries, ErrInvalidAmount,
// ErrAmountOutOfRange, ErrUnbalanced, ErrSingleAccount, ErrInvalidAccountName,
// ErrInvalidArgument.
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
	// Whether every entry names the first entry's account the same way (by id or by name). An
	// id and a name of one account are told apart by the store, after it resolves them.
	var firstID uuid.UUID
	oneAccount := true
	for i, e := range p.Entries {
		switch {
		case e.AccountID != "" && e.AccountName != "":
			return errorf(ReasonInvalidArgument, "entry %d: set account_id or account_name, not both", i)
		case e.AccountID != "":
			id, err := uuid.Parse(e.AccountID)
			if err != nil {
				return errorf(ReasonInvalidArgument, "entry %d: account_id is not a uuid", i)
			}
			if i == 0 {
				firstID = id
			} else if p.Entries[0].AccountID == "" || id != firstID {
				oneAccount = false
			}
		case e.AccountName != "":
			if _, err := ParseAccountName(e.AccountName); err != nil {
				return errorf(ReasonInvalidAccountName, "entry %d: %s", i, err.(*Error).Message)
			}
			if i > 0 && e.AccountName != p.Entries[0].AccountName {
				oneAccount = false
			}
		default:
			return errorf(ReasonInvalidArgument, "entry %d: account_id or account_name is required", i)
		}
		if e.AmountSantim <= 0 {
			return errorf(ReasonInvalidAmount, "entry %d: amount must be a positive number of santim, got %d", i, e.AmountSantim)
		}
		if e.AmountSantim > money.MaxAmountSantim {
			return errorf(ReasonAmountOutOfRange, "entry %d: amount %d santim is more than the maximum of %d per entry", i, e.AmountSantim, money.MaxAmountSantim)
		}
		// Cannot overflow: at most MaxEntries amounts of at most MaxAmountSantim each.
		switch e.Direction {
		case Debit:
			debits, _ = money.Add(debits, e.AmountSantim)
		case Credit:
			credits, _ = money.Add(credits, e.AmountSantim)
		default:
			return errorf(ReasonInvalidArgument, "entry %d: direction must be DEBIT or CREDIT", i)
		}
	}
	if debits != credits {
		return errorf(ReasonUnbalanced, "debits %d santim differ from credits %d santim", debits, credits)
	}
	if debits > money.MaxTransactionSantim {
		return errorf(ReasonAmountOutOfRange, "debits of %d santim are more than the maximum of %d per transaction", debits, money.MaxTransactionSantim)
	}
	if oneAccount {
		return errorf(ReasonSingleAccount, "every entry is on one account; a transaction moves money between accounts")
	}
	if err := validateMetadata(p.Metadata); err != nil {
		return err
	}
	return validateLineage(p.Lineage)
}

// fieldErr turns an internal/platform/field refusal into the ledger's InvalidArgument. Its message names
// the field and the rule, never the value.
func fieldErr(err error) error {
	if err == nil {
		return nil
	}
	var fe *field.Error
	if errors.As(err, &fe) {
		return errorf(ReasonInvalidArgument, "%s", fe.Error())
	}
	return errorf(ReasonInvalidArgument, "%s", err.Error())
}

// Field bounds of the ledger, within internal/platform/field's: the database columns hold these, and
// every unique index on them holds any value the edge lets through.
const (
	maxReasonBytes  = field.MaxText // reversal, void and adjustment reasons, lineage fields
	maxTokenBytes   = 512           // an opaque page token, before it is decoded
	maxAccountBytes = 255           // an account name (the chart's own bound)
)

func validateTenant(t string) error {
	if strings.TrimSpace(t) == "" {
		return errorf(ReasonMissingTenant, "tenant_id is required")
	}
	return fieldErr(field.Identifier("tenant_id", t, 0))
}

func validateKey(k string) error {
	if strings.TrimSpace(k) == "" {
		return errorf(ReasonMissingIdempotencyKey, "idempotency_key is required")
	}
	return fieldErr(field.Reference("idempotency_key", k, 0))
}

// parseID checks a uuid and returns its canonical form: uuid.Parse also reads forms Postgres
// does not ("urn:uuid:…"), which would otherwise reach the database as a malformed value.
func parseID(name, v string) (string, error) {
	if v == "" {
		return "", errorf(ReasonInvalidArgument, "%s is required", name)
	}
	u, err := uuid.Parse(v)
	if err != nil {
		return "", errorf(ReasonInvalidArgument, "%s must be a uuid", name)
	}
	return u.String(), nil
}

// validateReason checks a free-text reason; required says whether it may be empty.
func validateReason(name, v string, required bool) error {
	if required && strings.TrimSpace(v) == "" {
		return errorf(ReasonInvalidArgument, "%s is required", name)
	}
	return fieldErr(field.Text(name, v, maxReasonBytes))
}

func validateAdjustment(a *Adjustment) error {
	if a == nil {
		return errorf(ReasonInvalidArgument, "adjustment details are required")
	}
	if err := field.Identifier("adjustment.source", a.Source, 0); err != nil {
		return fieldErr(err)
	}
	if err := validateReason("adjustment.reason", a.Reason, true); err != nil {
		return err
	}
	// User ids of the approver and the requester: references (an id or an e-mail address).
	if err := field.Reference("adjustment.approved_by", a.ApprovedBy, 0); err != nil {
		return fieldErr(err)
	}
	if err := field.Reference("adjustment.requested_by", a.RequestedBy, 0); err != nil {
		return fieldErr(err)
	}
	if a.ApprovedBy == a.RequestedBy {
		return errorf(ReasonSelfApproved, "the approver must differ from the requester")
	}
	return nil
}

func validateMetadata(m map[string]string) error {
	size := 0
	for k, v := range m {
		if err := field.Identifier("metadata key", k, 0); err != nil {
			return fieldErr(err)
		}
		if err := field.Text("metadata value", v, 0); err != nil {
			return fieldErr(err)
		}
		size += len(k) + len(v)
	}
	if size > maxMetadataBytes {
		return errorf(ReasonInvalidArgument, "metadata is larger than %d bytes", maxMetadataBytes)
	}
	return nil
}

func validateLineage(l Lineage) error {
	for _, f := range [...]struct{ name, v string }{
		{"lineage.workflow_id", l.WorkflowID}, {"lineage.run_id", l.RunID}, {"lineage.step", l.Step},
	} {
		if err := field.Text(f.name, f.v, maxReasonBytes); err != nil {
			return fieldErr(err)
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
